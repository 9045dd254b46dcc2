// Worker thread for the SIFT pool: receives image bytes (or a grey image and view specs), answers with features
// (buffers transferred) or an error.
import { parentPort } from 'node:worker_threads';
import { extractFeatures, type SiftConfig } from './extract.js';
import type { WorkerReply, WorkerRequest } from './pool.js';
import { viewFeatures } from './views.js';

if (!parentPort) throw new Error('sift worker must run in a worker thread');
const port = parentPort;

port.on('message', async (req: WorkerRequest) => {
  const t0 = performance.now();
  let reply: WorkerReply;
  try {
    if (req.kind === 'views') {
      const r = viewFeatures({ grey: req.grey, width: req.width, height: req.height, scale: req.scale }, req.specs, req.params, req.keypointsPerView, req.maxSide);
      reply = { id: req.id, ok: true, kind: 'views', views: r.views, synthMs: r.synthMs, extractMs: r.extractMs, ms: performance.now() - t0 };
      port.postMessage(reply, r.views.flatMap((f) => [f.keypoints.buffer, f.descriptors.buffer]) as ArrayBuffer[]);
    } else {
      const f = await extractFeatures(req.buf, { sift: req.sift as SiftConfig });
      reply = { id: req.id, ok: true, kind: 'image', features: f, ms: performance.now() - t0 };
      port.postMessage(reply, [f.keypoints.buffer, f.descriptors.buffer] as ArrayBuffer[]);
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    reply = { id: req.id, ok: false, error: { name: e.name, code: e.code ?? 'error', message: e.message }, ms: performance.now() - t0 };
    port.postMessage(reply);
  }
});
