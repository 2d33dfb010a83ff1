// The security headers of everything the service answers as JSON (outside the /docs pages):
// the set OWASP's REST Security Cheat Sheet asks of an API. Nothing may be loaded, framed,
// sniffed or cached on the way, and no Referer leaks from a browser that opened a URL of
// ours. Set on every JSON route (src/plugins/security-headers.ts) and on every error answer,
// whoever writes it (src/http/error-answer.ts).
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});
