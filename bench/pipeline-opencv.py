#!/usr/bin/python3
"""The OpenCV side of `npm run bench:pipeline`: the same harvest built on OpenCV 4.6, the reference pipeline of
../shared/data/README.md and bench:search (opencv_search.py): SIFT (nfeatures=1000, images downscaled to the same
longest side as ours with INTER_AREA), one FLANN kd-tree index (4 trees, 64 checks) over every target descriptor,
2-NN ratio-0.8 votes -> shortlist of 30 -> BFMatcher knn 2, ratio 0.8, findHomography RANSAC 8 px, ranked by
inliers (a hit needs at least `min_inliers`). One thread. Reads a JSON job on stdin:
  {"targets": [{"id", "path"}], "sources": [{"id", "path", "kind"}], "max_side", "min_inliers"}
prints one JSON object: CPU and wall seconds per stage, per source (CPU ms, wall ms, ranked target ids with
inliers), and the peak RSS. With "workers" > 1 in the job, the images are described and the sources searched by that
many forked processes (each one thread; the FLANN index is built once, before the search workers fork, and shared
with them copy-on-write): CPU seconds are summed over the processes, so they are what one thread would spend; the
peak RSS is the largest process's."""
import json, multiprocessing as mp, resource, sys, time
import numpy as np
import cv2

job = json.load(sys.stdin)
cv2.setNumThreads(1)
sift = cv2.SIFT_create(nfeatures=1000)
max_side = job['max_side']
min_inl = job['min_inliers']
workers = max(1, int(job.get('workers', 1)))


def clocks():
    return time.process_time(), time.perf_counter()


def since(c):
    return time.process_time() - c[0], time.perf_counter() - c[1]


def feats(path):
    img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if img is None:
        return np.zeros((0, 2), np.float32), np.zeros((0, 128), np.uint8)
    h, w = img.shape
    s = min(1.0, max_side / max(h, w))
    if s < 1.0:
        img = cv2.resize(img, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)
    k, d = sift.detectAndCompute(img, None)
    if d is None:
        return np.zeros((0, 2), np.float32), np.zeros((0, 128), np.uint8)
    return np.float32([p.pt for p in k]).reshape(-1, 2), np.clip(np.round(d), 0, 255).astype(np.uint8)


def target_chunk(rng):
    """Features of targets rng[0]..rng[1]-1, and this process's CPU seconds for them."""
    c0 = time.process_time()
    out = [feats(job['targets'][i]['path']) for i in range(*rng)]
    return out, time.process_time() - c0


def chunks(n, size):
    return [(a, min(n, a + size)) for a in range(0, n, size)]


def child_rss():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


stages = {}
c = clocks()
tpts, tdesc, owner = [], [], []
n_t = len(job['targets'])
cpu_children = 0.0
if workers > 1:
    with mp.get_context('fork').Pool(workers) as pool:
        done = 0
        for out, cpu in pool.imap(target_chunk, chunks(n_t, 50)):
            cpu_children += cpu
            for p, d in out:
                tpts.append(p)
                tdesc.append(d)
                owner.append(np.full(len(d), done, np.int32))
                done += 1
            if done % 1000 < 50:
                print(f'opencv: {done}/{n_t} target features', file=sys.stderr, flush=True)
else:
    for i, t in enumerate(job['targets']):
        p, d = feats(t['path'])
        tpts.append(p)
        tdesc.append(d)
        owner.append(np.full(len(d), i, np.int32))
        if i % 1000 == 0:
            print(f'opencv: {i}/{n_t} target features', file=sys.stderr, flush=True)
t = since(c)
stages['targetFeatures'] = (t[0] + cpu_children, t[1])
c = clocks()
owner = np.concatenate(owner)
all_desc = np.concatenate(tdesc).astype(np.float32)
flann = cv2.FlannBasedMatcher(dict(algorithm=1, trees=4), dict(checks=64))
flann.add([all_desc])
flann.train()
stages['index'] = since(c)

bf = cv2.BFMatcher(cv2.NORM_L2)


def search_source(s):
    c0 = clocks()
    k, d = feats(s['path'])
    f = since(c0)
    c1 = clocks()
    out = []
    if len(d) >= 2:
        votes = np.zeros(len(job['targets']))
        for m in flann.knnMatch(d.astype(np.float32), k=2):
            if len(m) == 2 and m[0].distance < 0.8 * m[1].distance:
                votes[owner[m[0].trainIdx]] += 1
        short = [i for i in np.argsort(-votes)[:30] if votes[i] > 0]
        for i in short:
            if len(tdesc[i]) < 2:
                continue
            good = [a for a, b in (x for x in bf.knnMatch(d, tdesc[i], k=2) if len(x) == 2) if a.distance < 0.8 * b.distance]
            inl = 0
            if len(good) >= 4:
                src = np.float32([k[g.queryIdx] for g in good]).reshape(-1, 1, 2)
                dst = np.float32([tpts[i][g.trainIdx] for g in good]).reshape(-1, 1, 2)
                H, mask = cv2.findHomography(src, dst, cv2.RANSAC, 8.0)
                inl = int(mask.sum()) if mask is not None else 0
            if inl >= min_inl:
                out.append((inl, job['targets'][i]['id']))
        out.sort(key=lambda x: -x[0])
    m = since(c1)
    return {'id': s['id'], 'kind': s['kind'], 'featCpuMs': f[0] * 1000, 'featWallMs': f[1] * 1000, 'matchCpuMs': m[0] * 1000,
            'matchWallMs': m[1] * 1000, 'ranked': [[tid, inl] for inl, tid in out[:5]]}


per_source = []
c = clocks()
if workers > 1:
    with mp.get_context('fork').Pool(workers) as pool:
        for r in pool.imap(search_source, job['sources'], chunksize=4):
            per_source.append(r)
            if len(per_source) % 100 == 0:
                print(f'opencv: {len(per_source)}/{len(job["sources"])} sources', file=sys.stderr, flush=True)
else:
    for s in job['sources']:
        per_source.append(search_source(s))
        if len(per_source) % 100 == 0:
            print(f'opencv: {len(per_source)}/{len(job["sources"])} sources', file=sys.stderr, flush=True)
wall = since(c)[1]
# Per-source CPU is each search's own (measured in the process that ran it); the stage wall is split between
# features and matching in proportion to the per-source wall times.
c_feat = [sum(r['featCpuMs'] for r in per_source) / 1000, 0.0]
c_match = [sum(r['matchCpuMs'] for r in per_source) / 1000, 0.0]
fw = sum(r['featWallMs'] for r in per_source)
mw = sum(r['matchWallMs'] for r in per_source)
c_feat[1] = wall * fw / max(1e-9, fw + mw)
c_match[1] = wall * mw / max(1e-9, fw + mw)
stages['sourceFeatures'] = tuple(c_feat)
stages['match'] = tuple(c_match)
print(json.dumps({
    'opencv': cv2.__version__,
    'stages': {k: {'cpuS': round(v[0], 2), 'wallS': round(v[1], 2)} for k, v in stages.items()},
    'descriptors': int(len(all_desc)),
    'sources': per_source,
    'workers': workers,
    'peakRssMB': round(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, child_rss()) / 1024),
}))
