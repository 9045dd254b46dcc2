# OpenCV side of `npm run bench:sift`, run as a co-process so each image is timed right after ours (the machine is
# shared; interleaving keeps both sides under the same load). Protocol: one JSON object per line on stdin.
#   {"cmd": "init", "ratio", "ransac", "maxKeypoints", "repeat"}                      -> {"ok": true, "version"}
#   {"cmd": "image", "id", "grey", "w", "h", "kp", "desc"}  (our features in files)   -> {"ms", "kp"}
#   {"cmd": "pairs", "pairs": [{"id", "set", "a", "b", "H"?}]}                        -> {"pairs": [...]}, then exit
# OpenCV runs single-threaded with the same keypoint cap; both descriptor sets go through the same verifier
# (BFMatcher 2-NN ratio test + cv2.findHomography RANSAC).
import json, sys, time
import numpy as np
import cv2

cv2.setNumThreads(1)
cfg = None
sift = None
feats = {}
bf = cv2.BFMatcher(cv2.NORM_L2)


def reply(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def match(a, b, H=None):
    pa, da = a
    pb, db = b
    if len(da) < 2 or len(db) < 2:
        return 0, 0, None
    good = [m for m, n in (x for x in bf.knnMatch(da, db, k=2) if len(x) == 2) if m.distance < cfg['ratio'] * n.distance]
    if len(good) < 4:
        return len(good), 0, None
    A = np.float32([pa[m.queryIdx] for m in good])
    B = np.float32([pb[m.trainIdx] for m in good])
    _, mask = cv2.findHomography(A, B, cv2.RANSAC, cfg['ransac'])
    inl = int(mask.sum()) if mask is not None else 0
    within = None
    if H is not None:
        P = cv2.perspectiveTransform(A.reshape(-1, 1, 2), np.array(H, np.float64)).reshape(-1, 2)
        within = float((np.linalg.norm(P - B, axis=1) <= 3).mean())
    return len(good), inl, within


for line in sys.stdin:
    msg = json.loads(line)
    cmd = msg['cmd']
    if cmd == 'init':
        cfg = msg
        sift = cv2.SIFT_create(nfeatures=cfg['maxKeypoints'])
        reply({'ok': True, 'version': cv2.__version__})
    elif cmd == 'image':
        g = np.fromfile(msg['grey'], np.uint8).reshape(msg['h'], msg['w'])
        best = None
        for _ in range(cfg['repeat']):
            t = time.perf_counter()
            kp, d = sift.detectAndCompute(g, None)
            ms = (time.perf_counter() - t) * 1000
            best = ms if best is None else min(best, ms)
        cv_pts = np.float32([k.pt for k in kp]).reshape(-1, 2)
        cv_d = d.astype(np.float32) if d is not None else np.zeros((0, 128), np.float32)
        ours_kp = np.fromfile(msg['kp'], np.float32).reshape(-1, 6)
        ours_d = np.fromfile(msg['desc'], np.uint8).reshape(-1, 128).astype(np.float32)
        feats[msg['id']] = {'cv': (cv_pts, cv_d), 'ours': (ours_kp[:, :2].copy(), ours_d)}
        reply({'ms': best, 'kp': int(len(kp))})
    elif cmd == 'pairs':
        out = []
        for p in msg['pairs']:
            r = {'id': p['id'], 'set': p['set']}
            for side in ('ours', 'cv'):
                m, i, w = match(feats[p['a']][side], feats[p['b']][side], p.get('H'))
                r[side] = {'matches': m, 'inliers': i, 'within3px': w}
            out.append(r)
        reply({'pairs': out})
        break
