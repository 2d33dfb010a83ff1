// The one way an error answer is made, whoever makes it: the error and not-found handlers
// (src/errors/plugin.ts), a handler's error answer (src/routes/middleware.ts), /metrics,
// /readyz, load shedding, and the answers written before Fastify has a reply to write them
// with (Node's parser errors, an Expect it does not meet, a missing Host:
// src/errors/raw-answers.ts). `errorResponse` makes the answer; the writers below only frame it
// for where it goes: a Fastify reply, a Node ServerResponse, or the bare socket.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';
import { errorHeaders, type ErrorBody } from './catalogue.js';
import { API_SECURITY_HEADERS } from '../http/security-headers.js';

/** Header names (any case) and values. */
export type HeaderFields = Readonly<Record<string, string>>;

/** An error answer: what is sent, whatever sends it. */
export interface ErrorResponse {
  status: number;
  /** Every header but the framing ones (Content-Length, Connection); names in lower case. */
  headers: Record<string, string>;
  /** The body as sent: the contract's Error body, as JSON. */
  json: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The answer for an Error body: its status; the API's security headers (even under /docs,
 * where helmet's page headers were set first: an error is JSON, never a page), the headers
 * the code comes with (Retry-After), `headers` (an Allow, a WWW-Authenticate challenge; these
 * take precedence), then the JSON type and the request's id.
 */
export function errorResponse(body: ErrorBody, requestId: string, headers: HeaderFields = {}): ErrorResponse {
  const fields: Record<string, string> = { ...API_SECURITY_HEADERS, ...errorHeaders(body.code) };
  for (const [name, value] of Object.entries(headers)) fields[name.toLowerCase()] = value;
  fields['content-type'] = JSON_TYPE;
  fields['x-request-id'] = requestId;
  return { status: body.status, headers: fields, json: JSON.stringify(body) };
}

/** Sends an error answer through Fastify (its onSend hooks and access log see it). */
export function sendError(reply: FastifyReply, body: ErrorBody, headers?: HeaderFields): FastifyReply {
  const answer = errorResponse(body, reply.request.id, headers);
  return reply.code(answer.status).headers(answer.headers).send(answer.json);
}

/** The head and body of an answer written without Fastify. */
function framed(answer: ErrorResponse): Record<string, string> {
  return { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.json)) };
}

/** Writes an error answer to a Node response Fastify never saw (a request refused before it). */
export function writeError(response: ServerResponse, body: ErrorBody, requestId: string, headers?: HeaderFields): void {
  const answer = errorResponse(body, requestId, headers);
  response.writeHead(answer.status, framed(answer)).end(answer.json);
}

/**
 * Writes an error answer straight to the connection, when Node's parser gave up on it and
 * there is no response object to write with; the connection is closed after it.
 */
export function writeErrorToSocket(socket: Socket, body: ErrorBody, requestId: string, headers?: HeaderFields): void {
  const answer = errorResponse(body, requestId, headers);
  const head = Object.entries({ ...framed(answer), connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${head}\r\n${answer.json}`);
}
