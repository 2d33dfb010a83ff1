// Which PostgreSQL server the tests use: TEST_DATABASE_URL, else DATABASE_URL.
export interface TestServer {
  adminUrl: string;
  stop: () => Promise<void>;
}

export async function startTestServer(): Promise<TestServer> {
  const url = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!url) throw new Error('Set TEST_DATABASE_URL (or DATABASE_URL) to a PostgreSQL server the tests may create databases on');
  return { adminUrl: url, stop: async () => {} };
}
