/** What a deprecated operation announces on every answer (RFC 9745, RFC 8594, RFC 8288). */
export interface DeprecationNotice {
  /** When the operation was deprecated. */
  deprecation: Date | undefined;
  /** When it may be removed. */
  sunset: Date | undefined;
  /** The `Link` header, naming the successor. */
  link: string | undefined;
}

export function deprecationNotice(response: Response): DeprecationNotice {
  const deprecation = /^@(\d+)$/.exec(response.headers.get('deprecation') ?? '');
  const sunset = response.headers.get('sunset');
  return {
    deprecation: deprecation ? new Date(Number(deprecation[1]) * 1000) : undefined,
    sunset: sunset ? new Date(sunset) : undefined,
    link: response.headers.get('link') ?? undefined,
  };
}
