// A vitest reporter that prints each file's wall time, from its start to its end, hooks and
// module set-up included, beside the machine's busy CPU time meanwhile (/proc/stat, every
// process: the worker, the services and browsers it starts, PostgreSQL). The CPU is the
// file's own with one worker, where files run one at a time:
//   npx vitest run --maxWorkers=1 --reporter=./test/support/cpu-reporter.ts --reporter=dot
// (docs/testing.md, where the suite's time goes). Linux only.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** Ticks the machine's CPUs have been busy since boot (user, nice, system, irq, softirq). */
function busyTicks(): number {
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  return user + nice + system + irq + softirq;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export default class CpuReporter implements Reporter {
  private readonly started = new Map<string, { ticks: number; at: number }>();
  private readonly rows: { cpu: number; wall: number; file: string }[] = [];

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId, { ticks: busyTicks(), at: performance.now() });
  }

  onTestModuleEnd(module: TestModule): void {
    const start = this.started.get(module.moduleId);
    if (!start) return;
    this.rows.push({ cpu: (busyTicks() - start.ticks) / TICKS_PER_SECOND, wall: (performance.now() - start.at) / 1000, file: path.relative(process.cwd(), module.moduleId) });
  }

  onTestRunEnd(): void {
    const rows = this.rows.sort((a, b) => b.cpu - a.cpu);
    console.log(`\nCPU s  wall s  file (total ${rows.reduce((sum, row) => sum + row.cpu, 0).toFixed(0)} CPU s)`);
    for (const { cpu, wall, file } of rows) console.log(`${cpu.toFixed(1).padStart(5)}  ${wall.toFixed(1).padStart(6)}  ${file}`);
  }
}
