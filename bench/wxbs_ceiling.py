#!/usr/bin/python3
"""How many retrieval-wxbs pairs can a SIFT-family matcher tell from unrelated images at all? (issue 19)

An upper bound for capbridge's emitted P@1 on the set, independent of its index: every query is matched against its
true partner(s) and against negatives, pairwise, by brute force (no shortlist can lose anything), and the true pair
is "separable" when its RANSAC inliers clear every negative's by a margin (below). A query that is not separable
cannot be emitted without unrelated images verifying too, whatever the search does.

Features (both photos alike, RootSIFT descriptors):
  sift      OpenCV SIFT, contrast threshold 0.005 (thermal images give few keypoints at the default)
  halfsift  the same keypoints with orientation folded to [0, 180) and opposite gradient bins summed (HalfSIFT,
            WxBS paper: meant for contrast reversal, thermal vs visible)
  asift     OpenCV's AffineFeature around SIFT (default contrast threshold): ASIFT's views of both photos (tilts up to 2^((maxTilt-1)/2),
            rotations every 72/t degrees), keypoints mapped back: the two-sided view synthesis of MODS, denser
            than capbridge's (match.views)
Matching: FLANN kd-tree 2-NN, Lowe's ratio 0.8, one match per place on each side (4 px cells: ASIFT's views repeat
a place); judged by OpenCV MAGSAC++ homography (6 px) and fundamental matrix (2 px).
Negatives: every other query's partners (the hard ones: same kinds of scene) and 12 unrelated targets (seeded).
Separable: true H inliers >= max(15, 2 x the best negative's H inliers), or the same with F (>= max(20, 2 x)).

Usage: wxbs_ceiling.py SET_DIR FEATURES KINDS [maxTilt]   (npm run bench:wxbs-ceiling -- asift EVD 5)
  KINDS: comma list of the set README's kinds (EVD, WGABS, WGALBS, WGBS, WGLBS, WGSBS, WLABS) or 'all'
Prints a line per query to stderr and one JSON line to stdout. Features are cached under $TMPDIR."""
import sys, os, csv, json, random, time, re, hashlib
import numpy as np
import cv2

set_dir, kind_feat, kinds = sys.argv[1], sys.argv[2], sys.argv[3]
max_tilt = int(sys.argv[4]) if len(sys.argv) > 4 else 5
cache_dir = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'capbridge-wxbs-ceiling')
os.makedirs(cache_dir, exist_ok=True)


def rows(name):
    with open(os.path.join(set_dir, name), newline='', encoding='utf-8') as f:
        return list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))


# The kind of each query, from the provenance table of the set's README (EVD, or the WxBS category folder).
kind_of = {}
for line in open(os.path.join(set_dir, 'README.md'), encoding='utf-8'):
    m = re.match(r'\|\s*(s\d+)\s*\|\s*(\S+)', line)
    if m:
        p = m.group(2)
        kind_of[m.group(1)] = 'EVD' if '/EVD/' in p else (re.search(r'/v1\.1/([A-Z]+)/', p) or [None, '?'])[1]

truth = {}
for r in rows('truth.tsv'):
    truth.setdefault(r['source_id'], set()).add(r['target_id'])
src = {r['id']: r['image'] for r in rows('source.tsv')}
tgt = {r['id']: r['image'] for r in rows('target.tsv')}
want = None if kinds == 'all' else set(kinds.split(','))
queries = [s for s in sorted(truth) if want is None or kind_of.get(s, '?') in want]
partners = sorted({t for s in queries for t in truth[s]})
random.seed(2)
unrelated = random.sample(sorted(t for t in tgt if not any(t in v for v in truth.values())), 12)

cv2.setNumThreads(2)
sift = cv2.SIFT_create(nfeatures=0, contrastThreshold=0.005)
# ASIFT at SIFT's default contrast threshold: at 0.005 its views give 40-80k keypoints per image, hours of matching.
detector = cv2.AffineFeature_create(cv2.SIFT_create(), maxTilt=max_tilt) if kind_feat == 'asift' else sift


def features(path):
    key = hashlib.sha1(f'{kind_feat}|{max_tilt}|0.04|{path}'.encode()).hexdigest()[:16]
    file = os.path.join(cache_dir, key + '.npz')
    if os.path.exists(file):
        z = np.load(file)
        return z['xy'], z['d']
    img = cv2.imread(os.path.join(set_dir, path), cv2.IMREAD_GRAYSCALE)
    if kind_feat == 'halfsift':
        k = sift.detect(img, None)
        for p in k:
            p.angle = p.angle % 180
        k, d = sift.compute(img, k)
        if d is not None:
            d = d.reshape(-1, 16, 8)
            d = (d[:, :, :4] + d[:, :, 4:]).reshape(-1, 64)
    else:
        k, d = detector.detectAndCompute(img, None)
    if d is None or not len(k):
        xy, d = np.zeros((0, 2), np.float32), np.zeros((0, 64 if kind_feat == 'halfsift' else 128), np.float32)
    else:
        d = np.sqrt(d / np.maximum(d.sum(1, keepdims=True), 1e-6)).astype(np.float32)
        xy = np.array([p.pt for p in k], np.float32)
    np.savez(file, xy=xy, d=d)
    return xy, d


flann = cv2.FlannBasedMatcher({'algorithm': 1, 'trees': 4}, {'checks': 128})


def judge(a, b):
    (xa, da), (xb, db) = a, b
    if len(da) < 2 or len(db) < 2:
        return 0, 0
    good = [(m.queryIdx, m.trainIdx) for m, n in flann.knnMatch(da, db, k=2) if m.distance < 0.8 * n.distance]
    seen_a, seen_b, pairs = set(), set(), []
    for i, j in good:
        ka, kb = (int(xa[i, 0] // 4), int(xa[i, 1] // 4)), (int(xb[j, 0] // 4), int(xb[j, 1] // 4))
        if ka in seen_a or kb in seen_b:
            continue
        seen_a.add(ka)
        seen_b.add(kb)
        pairs.append((i, j))
    if len(pairs) < 8:
        return 0, 0
    p = xa[[i for i, _ in pairs]]
    q = xb[[j for _, j in pairs]]
    _, mh = cv2.findHomography(p, q, cv2.USAC_MAGSAC, 6.0, maxIters=5000, confidence=0.999)
    _, mf = cv2.findFundamentalMat(p, q, cv2.USAC_MAGSAC, 2.0, 0.999, 10000)
    return int(mh.sum()) if mh is not None else 0, int(mf.sum()) if mf is not None else 0


t0 = time.time()
per = []
for s in queries:
    q = features(src[s])
    pos = [judge(q, features(tgt[t])) for t in sorted(truth[s])]
    neg = [judge(q, features(tgt[t])) for t in partners + unrelated if t not in truth[s]]
    nh, nf = max(n[0] for n in neg), max(n[1] for n in neg)
    bh, bf = max(p[0] for p in pos), max(p[1] for p in pos)
    sep = bh >= max(15, 2 * nh) or bf >= max(20, 2 * nf)
    per.append({'query': s, 'kind': kind_of.get(s, '?'), 'pos': pos, 'negMax': [nh, nf], 'negatives': len(neg),
                'keypoints': int(len(q[0])), 'separable': sep})
    print(f"[wxbs-ceiling] {s} {kind_of.get(s, '?')} pos H/F {pos} best negative H {nh} F {nf} "
          f"{'SEPARABLE' if sep else '-'} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)

by_kind = {}
for r in per:
    k = by_kind.setdefault(r['kind'], {'queries': 0, 'separable': 0})
    k['queries'] += 1
    k['separable'] += int(r['separable'])
print(json.dumps({'bench': 'wxbs-ceiling', 'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                  'machine': {'nproc': os.cpu_count(), 'loadavg': [round(x, 1) for x in os.getloadavg()]},
                  'features': kind_feat, 'maxTilt': max_tilt if kind_feat == 'asift' else None, 'kinds': kinds,
                  'queries': len(per), 'separable': sum(r['separable'] for r in per), 'byKind': by_kind,
                  'separableQueries': [r['query'] for r in per if r['separable']], 'seconds': round(time.time() - t0),
                  'perQuery': per}))
