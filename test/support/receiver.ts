// A webhook receiver on 127.0.0.1 for tests: records every request (headers, raw body) and
// every connection, and answers as the test says (status, headers, or holding the request).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = { status: number; headers?: Record<string, string> } | { hold: true };

export interface Receiver {
  url: string;
  received: Received[];
  /** Connections accepted so far (a refused address never makes one). */
  connections: () => number;
  /** How the next requests are answered (default 200). */
  answer: (how: (request: Received) => Answer | Promise<Answer>) => void;
  /** Ends every held request's socket. */
  release: () => void;
  close: () => Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  let how: (request: Received) => Answer | Promise<Answer> = () => ({ status: 200 });
  const received: Received[] = [];
  const held = new Set<http.ServerResponse>();
  let connections = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const got = { headers: request.headers, body: Buffer.concat(chunks).toString(), at: Date.now() };
      received.push(got);
      void Promise.resolve(how(got)).then((answer) => {
        if ('hold' in answer) return void held.add(response);
        response.writeHead(answer.status, answer.headers ?? {});
        response.end();
      });
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    connections: () => connections,
    answer: (next) => void (how = next),
    release: () => {
      for (const response of held) response.socket?.destroy();
      held.clear();
    },
    close: async () => {
      for (const response of held) response.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
