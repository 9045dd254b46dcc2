# OpenCV side of `npm run bench:sift`: reads the manifest written by bench/sift.ts, runs OpenCV SIFT on the same
# grey images (single-threaded, same keypoint cap), and matches both our descriptors and OpenCV's with the same
# verifier (BFMatcher 2-NN ratio test + cv2.findHomography RANSAC). Prints one JSON object.
import json, sys, time
import numpy as np
import cv2

cv2.setNumThreads(1)
man = json.load(open(sys.argv[1]))
ratio = man['ratio']; ransac = man['ransac']
sift = cv2.SIFT_create(nfeatures=man['maxKeypoints'])
feats = {}
cv_ms = []
for im in man['images']:
    g = np.fromfile(im['grey'], np.uint8).reshape(im['h'], im['w'])
    sift.detectAndCompute(g, None) if not cv_ms and not feats else None  # warm-up on the first image
    t = time.perf_counter()
    kp, d = sift.detectAndCompute(g, None)
    cv_ms.append((time.perf_counter() - t) * 1000)
    cv_pts = np.float32([k.pt for k in kp]).reshape(-1, 2)
    cv_d = d if d is not None else np.zeros((0, 128), np.float32)
    ours_kp = np.fromfile(im['kp'], np.float32).reshape(-1, 6)
    ours_d = np.fromfile(im['desc'], np.uint8).reshape(-1, 128)
    feats[im['id']] = {'cv': (cv_pts, cv_d.astype(np.float32)), 'ours': (ours_kp[:, :2].copy(), ours_d.astype(np.float32))}

bf = cv2.BFMatcher(cv2.NORM_L2)

def match(a, b, H=None):
    pa, da = a; pb, db = b
    if len(da) < 2 or len(db) < 2:
        return 0, 0, None
    good = [m for m, n in (x for x in bf.knnMatch(da, db, k=2) if len(x) == 2) if m.distance < ratio * n.distance]
    if len(good) < 4:
        return len(good), 0, None
    A = np.float32([pa[m.queryIdx] for m in good]); B = np.float32([pb[m.trainIdx] for m in good])
    Hh, mask = cv2.findHomography(A, B, cv2.RANSAC, ransac)
    inl = int(mask.sum()) if mask is not None else 0
    within = None
    if H is not None:
        P = cv2.perspectiveTransform(A.reshape(-1, 1, 2), np.array(H, np.float64)).reshape(-1, 2)
        within = float((np.linalg.norm(P - B, axis=1) <= 3).mean())
    return len(good), inl, within

pairs = []
for p in man['pairs']:
    r = {'id': p['id'], 'set': p['set']}
    for side in ('ours', 'cv'):
        m, i, w = match(feats[p['a']][side], feats[p['b']][side], p.get('H'))
        r[side] = {'matches': m, 'inliers': i, 'within3px': w}
    pairs.append(r)
print(json.dumps({'cv_ms': cv_ms, 'cv_kp': [int(len(feats[im['id']]['cv'][0])) for im in man['images']], 'pairs': pairs}))
