// The geometry library's public interface: the rest of the code imports this file only.
export { localPlanes, ransacFundamental, sampson2 } from './epipolar.js';
export { type Mat3, frameAgrees, hullArea, invert3, ransacHomography, transferError2 } from './geometry.js';
