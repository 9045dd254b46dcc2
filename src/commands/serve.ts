// `capbridge serve [--port N] [--host 127.0.0.1] [--json]`: the review page and its JSON API (src/review/).
// Loopback by default. On another host a token (config review.token or CAPBRIDGE_TOKEN) is required, and the
// server refuses to start without one. Runs until SIGINT / SIGTERM.
import type { Command } from 'commander';
import { createReviewServer, isLoopbackHost } from '../review/index.js';
import { UserError } from '../util/errors.js';
import { action, printJson } from './context.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the review page (pairs, both photos with keypoint matches, captions with aligned words, judgements) on a local web server')
    .option('--port <n>', 'port (default: config review.port; 0 = any free port)')
    .option('--host <host>', 'address to listen on (default: config review.host, 127.0.0.1); another host needs a token')
    .option('--json', 'print the URL as JSON')
    .action(
      action(async (ctx, opts: { port?: string; host?: string; json?: boolean }) => {
        const host = opts.host ?? ctx.config.review.host;
        let port = ctx.config.review.port;
        if (opts.port !== undefined) {
          if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UserError(`--port: expected a port number 0-65535, got "${opts.port}"`);
          port = Number(opts.port);
        }
        const token = process.env.CAPBRIDGE_TOKEN || ctx.config.review.token;
        if (!isLoopbackHost(host) && !token) {
          throw new UserError(`serve: refusing to listen on ${host} (reachable from other machines) without a token: set review.token in the config or CAPBRIDGE_TOKEN`);
        }
        const app = createReviewServer(await ctx.bank, ctx.config, { host, token, logger: ctx.logger });
        try {
          await app.listen({ host, port });
        } catch (err) {
          throw new UserError(`serve: cannot listen on ${host}:${port}: ${(err as Error).message}`);
        }
        const addr = app.server.address();
        const actualPort = addr && typeof addr === 'object' ? addr.port : port;
        const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
        const url = `http://${shownHost}:${actualPort}/`;
        if (opts.json) printJson({ url, host, port: actualPort, dataDir: ctx.dataDir, tokenRequired: !isLoopbackHost(host) });
        else process.stdout.write(`capbridge review: ${url}  (data ${ctx.dataDir}; Ctrl+C stops)\n`);
        ctx.logger.info(`review server listening on ${host}:${actualPort}`);
        await new Promise<void>((resolve) => {
          const stop = () => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            resolve();
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
        await app.close();
        return 0;
      }),
    );
}
