#!/usr/bin/python3
"""Dumps OpenCV SIFT features of a retrieval set (source.tsv + target.tsv) into a cache folder, in the layout
of capbridge's Features: <id>.kp = float32 count*6 (x, y, size, angle, response, octave), <id>.desc = uint8
count*128, and index.json {id: {width, height, scale, count}}. Used by bench/search.ts until our SIFT lands,
and as a side-by-side reference. Usage: cv2_features.py SET_DIR OUT_DIR [nfeatures=1000] [max_side=640]"""
import sys, os, json, csv
import numpy as np
import cv2

set_dir, out_dir = sys.argv[1], sys.argv[2]
nfeat = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
max_side = int(sys.argv[4]) if len(sys.argv) > 4 else 640
os.makedirs(out_dir, exist_ok=True)
cv2.setNumThreads(1)
sift = cv2.SIFT_create(nfeatures=nfeat)
index = {}
for tsv in ('source.tsv', 'target.tsv'):
    with open(os.path.join(set_dir, tsv), newline='', encoding='utf-8') as f:
        rows = list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))
    for r in rows:
        img = cv2.imread(os.path.join(set_dir, r['image']), cv2.IMREAD_GRAYSCALE)
        h, w = img.shape
        s = min(1.0, max_side / max(h, w))
        if s < 1.0:
            img = cv2.resize(img, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)
        kps, desc = sift.detectAndCompute(img, None)
        n = len(kps)
        kp = np.zeros((n, 6), np.float32)
        for i, k in enumerate(kps):
            octv = k.octave & 255
            if octv >= 128: octv -= 256
            kp[i] = (k.pt[0], k.pt[1], k.size, k.angle, k.response, octv)
        if desc is None: desc = np.zeros((0, 128), np.float32)
        d = np.clip(np.round(desc), 0, 255).astype(np.uint8)
        kp.tofile(os.path.join(out_dir, r['id'] + '.kp'))
        d.tofile(os.path.join(out_dir, r['id'] + '.desc'))
        index[r['id']] = {'width': img.shape[1], 'height': img.shape[0], 'scale': s, 'count': n}
with open(os.path.join(out_dir, 'index.json'), 'w') as f:
    json.dump(index, f)
print(len(index), 'images', file=sys.stderr)
