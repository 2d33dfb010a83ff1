// The statistics of `npm run bench`: medians, quantiles, and paired ratios with a
// confidence interval for before/after comparisons on a noisy machine.

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** The q-quantile of ascending `sorted` (the value below which a fraction q lies). */
export const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;

export interface PairedRatio {
  median: number;
  low: number;
  high: number;
  /** Whether low..high is a 95% confidence interval (else it is the range of the ratios). */
  confidence: boolean;
}

/**
 * The median of paired ratios (run i of A over run i of B, measured one after the other)
 * with a distribution-free 95% confidence interval: order statistics k and n + 1 - k of the
 * sorted ratios, k the largest with P(Binomial(n, 1/2) < k) ≤ 2.5%. On a shared machine a
 * run's req/s swings by 10-20%; pairing cancels the drift both runs of a pair saw, and the
 * interval says whether a difference of a few percent is real. With fewer than 6 pairs no
 * such interval exists, and the range of the ratios is given.
 */
export function pairedRatio(a: number[], b: number[]): PairedRatio {
  const ratios = a.map((x, i) => x / (b[i] as number)).sort((x, y) => x - y);
  const n = ratios.length;
  let k = 0;
  let below = 0; // P(Binomial(n, 1/2) < k + 1), summed term by term
  for (let c = 0, term = 0.5 ** n; c < n; c++, term = (term * (n - c + 1)) / c) {
    below += term;
    if (below > 0.025) break;
    k = c + 1;
  }
  const confidence = k >= 1;
  return { median: median(ratios), low: ratios[confidence ? k - 1 : 0] as number, high: ratios[confidence ? n - k : n - 1] as number, confidence };
}
