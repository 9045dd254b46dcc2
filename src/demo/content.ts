// The demo's news: English stories with photos, and Chinese stories with other outlets' takes on some of the
// same photos, captioned at every comparability level (written for this project):
//   par — a translation of the English caption;  com — an independent caption of the same photo;
//   pse — same topic, different facts;           inc — a caption about something else.
// Plus stories on each side whose photos appear on no other site.
import type { Retake } from './scenes.js';

export type IntendedLevel = 'par' | 'com' | 'pse' | 'inc';

export interface DemoStory {
  slug: string;
  title: string;
  caption: string;
  /** Scene seed of the photo. */
  scene: number;
  /** How this outlet's photo differs from the original (English stories: none). */
  retake?: Retake;
  /** For Chinese stories on a shared photo: the level their caption was written at. */
  intended?: IntendedLevel;
}

export const ENGLISH: DemoStory[] = [
  { slug: 'harbour-fire', scene: 101, title: 'Warehouse fire at the harbour', caption: 'Firefighters spray water on a burning warehouse near the harbour.' },
  { slug: 'tree-planting', scene: 102, title: 'Pupils plant trees', caption: 'Children plant trees in the city park on Sunday morning.' },
  { slug: 'flood-rescue', scene: 103, title: 'Flood hits river villages', caption: 'Rescue teams search for survivors after the flood destroyed houses in the village.' },
  { slug: 'rice-harvest', scene: 104, title: 'A good year for rice', caption: 'Farmers harvest rice in the fields south of the city at sunset.' },
  { slug: 'summit', scene: 105, title: 'Leaders meet in the capital', caption: 'The prime minister speaks to reporters at a press conference in the capital.' },
  { slug: 'cup-final', scene: 106, title: 'Cup final celebrations', caption: 'Football fans celebrate in the street after their team won the cup.' },
  { slug: 'bridge', scene: 107, title: 'New bridge opens', caption: 'The new bridge over the river opened to traffic on Monday.' },
  { slug: 'marathon', scene: 108, title: 'Thousands run the city marathon', caption: 'Thousands of runners cross the old bridge during the city marathon.' },
  // English-only stories: their photos are on no Chinese site
  { slug: 'museum', scene: 201, title: 'Museum reopens', caption: 'Visitors queue outside the art museum as it reopens after renovation.' },
  { slug: 'snow', scene: 202, title: 'First snow of winter', caption: 'Heavy snow covers cars and streets in the northern suburbs.' },
  { slug: 'market', scene: 203, title: 'Night market returns', caption: 'Street vendors sell food at the night market by the station.' },
];

export const CHINESE: DemoStory[] = [
  { slug: 'gangkou-huozai', scene: 101, retake: 'crop', intended: 'par', title: '港口仓库起火', caption: '消防员向港口附近一座燃烧的仓库喷水。' },
  // the same photo on a second page, another outlet's crop: one source pairs with several targets
  { slug: 'huozai-zhuizong', scene: 101, retake: 'recompress', intended: 'com', title: '港口火灾追踪', caption: '港口一座仓库发生大火，消防员正在灭火。' },
  { slug: 'zhishu', scene: 102, retake: 'scale', intended: 'par', title: '学生植树', caption: '周日上午，孩子们在市公园里植树。' },
  // syndicated: the same caption and photo on two pages — collapsed into one pair with both provenances
  { slug: 'zhishu-zhuanzai', scene: 102, retake: 'crop', intended: 'par', title: '学生植树（转载）', caption: '周日上午，孩子们在市公园里植树。' },
  { slug: 'hongshui', scene: 103, retake: 'rotate', intended: 'com', title: '洪水袭击沿河村庄', caption: '洪水过后，救援人员在村里的房屋废墟中寻找幸存者。' },
  { slug: 'shuidao', scene: 104, retake: 'perspective', intended: 'com', title: '水稻丰收', caption: '傍晚，城南的农民在田里收割水稻。' },
  { slug: 'huiwu', scene: 105, retake: 'scale', intended: 'pse', title: '首都会晤', caption: '总统在首都会见了来访的外国代表团。' },
  { slug: 'bisai', scene: 106, retake: 'crop', intended: 'pse', title: '篮球联赛', caption: '篮球队在昨晚的比赛中以三分之差输给了对手。' },
  { slug: 'liugan', scene: 107, retake: 'recompress', intended: 'inc', title: '冬季健康提示', caption: '专家提醒市民冬季注意预防流感。' },
  { slug: 'malasong', scene: 108, retake: 'perspective', intended: 'par', title: '城市马拉松', caption: '城市马拉松期间，数千名跑者跑过老桥。' },
  // Chinese-only stories
  { slug: 'gaotie', scene: 301, title: '高铁新线开通', caption: '新的高速铁路线今天正式开通运营。' },
  { slug: 'dengjie', scene: 302, title: '元宵灯会', caption: '市民在公园里观赏元宵节花灯。' },
  { slug: 'tushuguan', scene: 303, title: '新图书馆', caption: '读者在新落成的图书馆里阅读。' },
];
