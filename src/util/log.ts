// Logging through winston, always on stderr so stdout stays clean for results and --json.
// On a TTY: short readable lines; otherwise (journald, docker, pipes) one JSON object per line.
import winston from 'winston';

export type Logger = winston.Logger;

export function createLogger(level = 'info', tty = Boolean(process.stderr.isTTY)): Logger {
  const format = tty
    ? winston.format.combine(
        winston.format.colorize(),
        winston.format.timestamp({ format: 'HH:mm:ss' }),
        winston.format.printf(({ level: lv, message, timestamp, ...meta }) => {
          const rest = Object.keys(meta).length ? ' ' + JSON.stringify(meta) : '';
          return `${timestamp} ${lv} ${message}${rest}`;
        }),
      )
    : winston.format.combine(winston.format.timestamp(), winston.format.json());
  return winston.createLogger({
    level,
    format,
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] })],
  });
}
