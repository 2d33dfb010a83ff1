// The statistics `npm run bench` reports its before/after ratios with (bench/stats.ts).
import { describe, expect, it } from 'vitest';
import { median, pairedRatio, quantile } from '../../bench/stats.js';

const ones = (n: number): number[] => Array.from({ length: n }, () => 1);
const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('pairedRatio', () => {
  const cases: [string, { given: [number[], number[]]; want: ReturnType<typeof pairedRatio> }][] = [
    // P(Binomial(5, 1/2) = 0) = 1/32 > 2.5%: no order statistic gives 95%.
    ['five pairs: no interval, the range', { given: [[1.1, 0.9, 1.0, 1.05, 0.95], ones(5)], want: { median: 1.0, low: 0.9, high: 1.1, confidence: false } }],
    // 1/64 ≤ 2.5% < 7/64: the smallest and the largest.
    ['six pairs: smallest and largest', { given: [[6, 1, 5, 2, 4, 3], ones(6)], want: { median: 3.5, low: 1, high: 6, confidence: true } }],
    // P(X ≤ 1) = 10/512 ≤ 2.5% < P(X ≤ 2) = 46/512: the 2nd and the 8th of 9.
    ['nine pairs: 2nd and 8th', { given: [upTo(9).reverse(), ones(9)], want: { median: 5, low: 2, high: 8, confidence: true } }],
    ['eleven pairs: 2nd and 10th', { given: [upTo(11), ones(11)], want: { median: 6, low: 2, high: 10, confidence: true } }],
    // P(X ≤ 3) = 576/32768 ≤ 2.5% < P(X ≤ 4): the 4th and the 12th of 15.
    ['fifteen pairs: 4th and 12th', { given: [upTo(15), ones(15)], want: { median: 8, low: 4, high: 12, confidence: true } }],
    // Both runs of each pair saw the same drift (the machine got busier): the pairs agree
    // exactly, where the medians of each side alone would be a ratio of different moments.
    ['a drift both runs of a pair saw cancels', { given: [[100, 80, 60, 40, 20, 10], [50, 40, 30, 20, 10, 5]], want: { median: 2, low: 2, high: 2, confidence: true } }],
    // Sorting each side before pairing would give 1 for every pair.
    ['runs are paired by position, not sorted first', { given: [[1, 3, 1, 3, 1, 3], [1, 3, 1, 3, 1, 3].reverse()], want: { median: (1 / 3 + 3) / 2, low: 1 / 3, high: 3, confidence: true } }],
  ];
  it.each(cases)('%s', (_title, { given, want }) => {
    expect(pairedRatio(...given)).toEqual(want);
  });
});

describe('median and quantile', () => {
  const cases: [string, { given: () => number; want: number }][] = [
    ['median of an odd count: the middle', { given: () => median([3, 1, 2]), want: 2 }],
    ['median of an even count: the mean of the middle two', { given: () => median([4, 1, 3, 2]), want: 2.5 }],
    ['p50 of 1..100', { given: () => quantile(upTo(100), 0.5), want: 51 }],
    ['p99 of 1..1000: the value 1% of answers exceed', { given: () => quantile(upTo(1000), 0.99), want: 991 }],
    ['p99 of one value', { given: () => quantile([2.9], 0.99), want: 2.9 }],
    ['quantile of nothing', { given: () => quantile([], 0.5), want: Number.NaN }],
  ];
  it.each(cases)('%s', (_title, { given, want }) => {
    expect(given()).toEqual(want);
  });
});
