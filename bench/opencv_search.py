#!/usr/bin/python3
"""The OpenCV reference pipeline of ../shared/data/README.md, for bench/search.ts: SIFT (nfeatures=1000), FLANN
(kd-tree x4, 64 checks) 2-NN ratio-0.8 votes over all target descriptors -> shortlist of 30 -> BFMatcher knn 2,
ratio 0.8, findHomography RANSAC 8 px -> ranked by inliers. Prints one JSON object: ranked lists and timings.
Usage: opencv_search.py SET_DIR [max_queries] [query_id,query_id,...]"""
import sys, os, csv, json, time
import numpy as np
import cv2

set_dir = sys.argv[1]
maxq = int(sys.argv[2]) if len(sys.argv) > 2 else 10**9
cv2.setNumThreads(1)
sift = cv2.SIFT_create(nfeatures=1000)

def rows(name):
    with open(os.path.join(set_dir, name), newline='', encoding='utf-8') as f:
        return list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))

def feats(path):
    img = cv2.imread(os.path.join(set_dir, path), cv2.IMREAD_GRAYSCALE)
    t = time.perf_counter()
    k, d = sift.detectAndCompute(img, None)
    return k, d, (time.perf_counter() - t) * 1000

targets = rows('target.tsv')
only = set(sys.argv[3].split(',')) if len(sys.argv) > 3 and sys.argv[3] else None
sources = [r for r in rows('source.tsv') if only is None or r['id'] in only][:maxq]
tk, td, owner = [], [], []
t0 = time.perf_counter()
for i, r in enumerate(targets):
    k, d, _ = feats(r['image'])
    if d is None:
        k, d = [], np.zeros((0, 128), np.float32)
    tk.append(k); td.append(d)
    owner.extend([i] * len(d))
owner = np.array(owner)
flann = cv2.FlannBasedMatcher(dict(algorithm=1, trees=4), dict(checks=64))
flann.add([np.vstack(td)])
flann.train()
build_ms = (time.perf_counter() - t0) * 1000
bf = cv2.BFMatcher()
ranked, lat, sift_ms = {}, [], []
for r in sources:
    k, d, ms = feats(r['image'])
    sift_ms.append(ms)
    t = time.perf_counter()
    out = []
    if d is not None and len(d) >= 2:
        votes = np.zeros(len(targets))
        for m in flann.knnMatch(d, k=2):
            if len(m) == 2 and m[0].distance < 0.8 * m[1].distance:
                votes[owner[m[0].trainIdx]] += 1
        short = [i for i in np.argsort(-votes)[:30] if votes[i] > 0]
        for i in short:
            if td[i] is None or len(td[i]) < 2:
                continue
            good = [a for a, b in (x for x in bf.knnMatch(d, td[i], k=2) if len(x) == 2) if a.distance < 0.8 * b.distance]
            inl = 0
            if len(good) >= 4:
                src = np.float32([k[g.queryIdx].pt for g in good]).reshape(-1, 1, 2)
                dst = np.float32([tk[i][g.trainIdx].pt for g in good]).reshape(-1, 1, 2)
                H, mask = cv2.findHomography(src, dst, cv2.RANSAC, 8.0)
                inl = int(mask.sum()) if mask is not None else 0
            out.append((inl, targets[i]['id']))
        out.sort(key=lambda x: -x[0])
    lat.append((time.perf_counter() - t) * 1000)
    ranked[r['id']] = [tid for inl, tid in out]
print(json.dumps({'ranked': ranked, 'latency_ms': lat, 'sift_ms': sift_ms, 'build_ms': build_ms}))
