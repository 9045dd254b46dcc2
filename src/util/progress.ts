// Progress for long commands: a bar on a TTY (stderr), nothing otherwise; the summary is printed by the caller.
import cliProgress from 'cli-progress';

export interface Progress {
  tick(n?: number, label?: string): void;
  setTotal(total: number): void;
  stop(): void;
  /** Starts the bar again at 0 of `total` (a step before the command's own work, e.g. re-encoding the index). */
  reset?(total: number): void;
}

const silent: Progress = { tick() {}, setTotal() {}, stop() {}, reset() {} };

/** A step's progress shown on a command's bar (reset to the step's total, labelled), then the bar reset for the rest. */
export function stepOn(bar: Progress, label: string): (total: number) => Progress {
  return (total) => {
    bar.reset?.(total);
    return { tick: (n = 1) => bar.tick(n, label), setTotal: (t) => bar.setTotal(t), stop: () => bar.reset?.(0) };
  };
}

export function createProgress(label: string, total: number, opts: { enabled?: boolean } = {}): Progress {
  const enabled = opts.enabled ?? (Boolean(process.stderr.isTTY) && !process.env.CI);
  if (!enabled) return silent;
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} [{bar}] {value}/{total} {percentage}% | {eta_formatted} left {detail}`,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { detail: '' });
  return {
    tick(n = 1, detail = '') {
      bar.increment(n, { detail });
    },
    setTotal(t: number) {
      bar.setTotal(t);
    },
    reset(t: number) {
      bar.setTotal(t);
      bar.update(0, { detail: '' });
    },
    stop() {
      bar.stop();
    },
  };
}
