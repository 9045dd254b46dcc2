#!/usr/bin/python3
"""The OpenCV side of `npm run bench:pipeline`: the same harvest built on OpenCV 4.6, the reference pipeline of
../shared/data/README.md and bench:search (opencv_search.py): SIFT (nfeatures=1000, images downscaled to the same
longest side as ours with INTER_AREA), one FLANN kd-tree index (4 trees, 64 checks) over every target descriptor,
2-NN ratio-0.8 votes -> shortlist of 30 -> BFMatcher knn 2, ratio 0.8, findHomography RANSAC 8 px, ranked by
inliers (a hit needs at least `min_inliers`). One thread. Reads a JSON job on stdin:
  {"targets": [{"id", "path"}], "sources": [{"id", "path", "kind"}], "max_side", "min_inliers"}
prints one JSON object: CPU and wall seconds per stage, per source (CPU ms, wall ms, ranked target ids with
inliers), and the process's peak RSS."""
import json, resource, sys, time
import numpy as np
import cv2

job = json.load(sys.stdin)
cv2.setNumThreads(1)
sift = cv2.SIFT_create(nfeatures=1000)
max_side = job['max_side']
min_inl = job['min_inliers']


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


stages = {}
c = clocks()
tpts, tdesc, owner = [], [], []
for i, t in enumerate(job['targets']):
    p, d = feats(t['path'])
    tpts.append(p)
    tdesc.append(d)
    owner.append(np.full(len(d), i, np.int32))
    if i % 1000 == 0:
        print(f'opencv: {i}/{len(job["targets"])} target features', file=sys.stderr, flush=True)
stages['targetFeatures'] = since(c)
c = clocks()
owner = np.concatenate(owner)
all_desc = np.concatenate(tdesc).astype(np.float32)
flann = cv2.FlannBasedMatcher(dict(algorithm=1, trees=4), dict(checks=64))
flann.add([all_desc])
flann.train()
stages['index'] = since(c)

bf = cv2.BFMatcher(cv2.NORM_L2)
per_source = []
c_feat = [0.0, 0.0]
c_match = [0.0, 0.0]
for n, s in enumerate(job['sources']):
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
    c_feat[0] += f[0]; c_feat[1] += f[1]; c_match[0] += m[0]; c_match[1] += m[1]
    per_source.append({'id': s['id'], 'kind': s['kind'], 'featCpuMs': f[0] * 1000, 'matchCpuMs': m[0] * 1000,
                       'matchWallMs': m[1] * 1000, 'ranked': [[tid, inl] for inl, tid in out[:5]]})
    if n % 100 == 0:
        print(f'opencv: {n}/{len(job["sources"])} sources', file=sys.stderr, flush=True)
stages['sourceFeatures'] = tuple(c_feat)
stages['match'] = tuple(c_match)
print(json.dumps({
    'opencv': cv2.__version__,
    'stages': {k: {'cpuS': round(v[0], 2), 'wallS': round(v[1], 2)} for k, v in stages.items()},
    'descriptors': int(len(all_desc)),
    'sources': per_source,
    'peakRssMB': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
}))
