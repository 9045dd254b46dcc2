// The mean RootSIFT descriptor of natural photos (293041 keypoints of the 420 Flickr photos of
// mining-flickr8k's target bank, written by bench/mean-rootsift.ts). SIFT descriptors of any photo share this
// mean (orientation-normalised gradients, Gaussian-weighted cells), so random hyperplanes through the origin
// put most descriptors on the same side: biased hash bits and crowded buckets. Projecting the descriptor minus
// this mean balances the bits: on retrieval-smvs (other photos) the mean bias of a bit fell from 0.135 to
// 0.012 and the bucket a keypoint lands in from 38 to 19 entries on average (uniform would be 3).
// Layout: 4x4 cells x 8 orientation bins, as the descriptors.
export const MEAN_ROOTSIFT = Float32Array.of(
  0.0714, 0.0629, 0.0537, 0.0559, 0.0617, 0.0463, 0.0394, 0.0493,
  0.1207, 0.0847, 0.0555, 0.0521, 0.0569, 0.0471, 0.0474, 0.0759,
  0.1210, 0.0736, 0.0463, 0.0468, 0.0577, 0.0536, 0.0579, 0.0878,
  0.0719, 0.0490, 0.0394, 0.0467, 0.0631, 0.0578, 0.0558, 0.0644,
  0.0881, 0.0660, 0.0562, 0.0645, 0.0752, 0.0571, 0.0449, 0.0565,
  0.1596, 0.0955, 0.0588, 0.0631, 0.0716, 0.0569, 0.0517, 0.0920,
  0.1593, 0.0906, 0.0504, 0.0567, 0.0734, 0.0654, 0.0611, 0.0983,
  0.0878, 0.0562, 0.0453, 0.0585, 0.0784, 0.0675, 0.0582, 0.0674,
  0.0881, 0.0567, 0.0451, 0.0570, 0.0751, 0.0646, 0.0560, 0.0659,
  0.1596, 0.0922, 0.0519, 0.0568, 0.0716, 0.0632, 0.0587, 0.0954,
  0.1592, 0.0984, 0.0612, 0.0653, 0.0734, 0.0567, 0.0504, 0.0906,
  0.0877, 0.0673, 0.0582, 0.0673, 0.0783, 0.0586, 0.0455, 0.0564,
  0.0715, 0.0495, 0.0395, 0.0463, 0.0616, 0.0560, 0.0538, 0.0629,
  0.1208, 0.0760, 0.0475, 0.0471, 0.0569, 0.0520, 0.0553, 0.0846,
  0.1208, 0.0879, 0.0581, 0.0536, 0.0575, 0.0467, 0.0462, 0.0735,
  0.0716, 0.0645, 0.0559, 0.0577, 0.0628, 0.0466, 0.0394, 0.0490,
);
