// What src/http/node-internals.ts relies on in Node's HTTP server, checked on a plain node:http
// server so that a Node release that changes it fails here, by name, rather than somewhere
// in the error answers (src/errors/raw-answers.ts: handleClientError; src/http/pipelining.ts: awaitTurn).
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { attachedResponse } from '../../src/http/node-internals.js';

interface Seen {
  request: IncomingMessage;
  response: ServerResponse;
  /** attachedResponse(socket) when the 'request' event came. */
  attached: ServerResponse | undefined;
}

let server: http.Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server that records each request and leaves it unanswered; resolves with its port. */
async function serve(seen: Seen[], onClientError?: (error: Error, socket: Socket) => void): Promise<number> {
  server = http.createServer((request, response) => seen.push({ request, response, attached: attachedResponse(request.socket) }));
  if (onClientError) server.on('clientError', onClientError);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function connect(port: number): Socket {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  socket.resume();
  sockets.push(socket);
  return socket;
}

async function until<T>(what: string, value: () => T | undefined): Promise<T> {
  for (let waited = 0; waited < 10_000; waited += 10) {
    const found = value();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

describe("src/http/node-internals.ts: Node's answer attached to a connection", () => {
  it("is the request's own response while it is handled", async () => {
    const seen: Seen[] = [];
    connect(await serve(seen)).write(get('/one'));
    const [one] = await until('the request', () => (seen.length === 1 ? seen : undefined));
    expect(one?.attached).toBe(one?.response);
  });

  it('is the earlier response for a pipelined request, then its own once the earlier one has closed', async () => {
    const seen: Seen[] = [];
    connect(await serve(seen)).write(get('/first') + get('/second'));
    const [first, second] = await until('both requests', () => (seen.length === 2 ? seen : undefined));
    if (!first || !second) throw new Error('two requests expected');
    expect(second.request.url).toBe('/second');
    expect(second.attached).toBe(first.response);
    // awaitTurn waits for the attached answer's 'close', then looks again.
    const afterClose = new Promise<ServerResponse | undefined>((resolve) => first.response.once('close', () => resolve(attachedResponse(second.request.socket))));
    first.response.end('first');
    expect(await afterClose).toBe(second.response);
  });

  it('is undefined on a keep-alive connection once its answers are written', async () => {
    const seen: Seen[] = [];
    const errors: Array<ServerResponse | undefined> = [];
    const socket = connect(await serve(seen, (_error, s) => (errors.push(attachedResponse(s)), s.destroy())));
    socket.write(get('/one'));
    const [one] = await until('the request', () => (seen.length === 1 ? seen : undefined));
    const finished = new Promise((resolve) => one?.response.once('finish', resolve));
    one?.response.end('one');
    await finished;
    // A bare LF inside a header: the parser refuses it (clientError) with no request read.
    socket.write('GET /two HTTP/1.1\r\nHost: x\nBad: y\r\n\r\n');
    await until('the client error', () => (errors.length === 1 ? errors : undefined));
    expect(errors).toEqual([undefined]);
  });

  it("in clientError, is the response of the request whose body broke, its request not complete", async () => {
    const seen: Seen[] = [];
    const errors: Array<ServerResponse | undefined> = [];
    const socket = connect(await serve(seen, (_error, s) => (errors.push(attachedResponse(s)), s.destroy())));
    socket.write('POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
    await until('the request', () => (seen.length === 1 ? seen : undefined));
    socket.write('zz\r\n');
    const [attached] = await until('the client error', () => (errors.length === 1 ? errors : undefined));
    expect(attached).toBe(seen[0]?.response);
    expect(attached?.req.url).toBe('/body');
    expect(attached?.req.complete).toBe(false);
  });

  it('in clientError after a complete request whose answer is pending, is that response, its request complete', async () => {
    const seen: Seen[] = [];
    const errors: Array<ServerResponse | undefined> = [];
    const socket = connect(await serve(seen, (_error, s) => errors.push(attachedResponse(s))));
    socket.write(get('/pending'));
    await until('the request', () => (seen.length === 1 ? seen : undefined));
    socket.write('GET /two HTTP/1.1\r\nHost: x\nBad: y\r\n\r\n');
    const [attached] = await until('the client error', () => (errors.length === 1 ? errors : undefined));
    expect(attached).toBe(seen[0]?.response);
    expect(attached?.req.complete).toBe(true);
  });
});
