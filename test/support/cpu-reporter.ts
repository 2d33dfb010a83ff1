// A vitest reporter that prints each file's wall time (its import, setup, hooks and tests, as
// vitest's own diagnostics time them) beside the machine's busy CPU time meanwhile
// (/proc/stat, every process: the worker, the services and browsers it starts, PostgreSQL),
// read from a timeline sampled every 50 ms. The CPU is the file's own with one worker, where
// files run one at a time:
//   npx vitest run --maxWorkers=1 --reporter=./test/support/cpu-reporter.ts --reporter=dot
// (docs/testing.md, where the suite's time goes). Linux only.
//
// The times come from each file's own task (its start, and its diagnostics' durations), not
// from when the reporter hears of it: a worker reports in batches, and a file whose start and
// end arrived together read as taking no time at all.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { experimental_getRunnerTask, type Reporter, type TestModule } from 'vitest/node';

/** Ticks the machine's CPUs have been busy since boot (user, nice, system, irq, softirq). */
function busyTicks(): number {
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  return user + nice + system + irq + softirq;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export default class CpuReporter implements Reporter {
  /** [epoch ms, busy ticks], in time order. */
  private readonly timeline: [number, number][] = [];
  private timer: NodeJS.Timeout | undefined;

  private sample(): void {
    this.timeline.push([Date.now(), busyTicks()]);
  }

  /** Busy ticks since boot at `at` (epoch ms), interpolated between the samples around it. */
  private ticksAt(at: number): number {
    const after = this.timeline.findIndex(([t]) => t >= at);
    if (after <= 0) return (this.timeline[after === 0 ? 0 : this.timeline.length - 1] as [number, number])[1];
    const [t0, k0] = this.timeline[after - 1] as [number, number];
    const [t1, k1] = this.timeline[after] as [number, number];
    return t1 === t0 ? k1 : k0 + ((k1 - k0) * (at - t0)) / (t1 - t0);
  }

  onTestRunStart(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), 50);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    clearInterval(this.timer);
    this.sample();
    const rows = modules.map((module) => {
      const { collectDuration, setupDuration, duration } = module.diagnostic();
      const started = experimental_getRunnerTask(module).result?.startTime ?? 0;
      const from = started - collectDuration - setupDuration;
      const to = started + duration;
      return { cpu: (this.ticksAt(to) - this.ticksAt(from)) / TICKS_PER_SECOND, wall: (to - from) / 1000, file: path.relative(process.cwd(), module.moduleId) };
    });
    rows.sort((a, b) => b.cpu - a.cpu);
    console.log(`\nCPU s  wall s  file (total ${rows.reduce((sum, row) => sum + row.cpu, 0).toFixed(0)} CPU s)`);
    for (const { cpu, wall, file } of rows) console.log(`${cpu.toFixed(1).padStart(5)}  ${wall.toFixed(1).padStart(6)}  ${file}`);
  }
}
