// Progress for long commands: a bar on a TTY (stderr), nothing otherwise; the summary is printed by the caller.
import cliProgress from 'cli-progress';

export interface Progress {
  tick(n?: number, label?: string): void;
  setTotal(total: number): void;
  stop(): void;
}

const silent: Progress = { tick() {}, setTotal() {}, stop() {} };

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
    stop() {
      bar.stop();
    },
  };
}
