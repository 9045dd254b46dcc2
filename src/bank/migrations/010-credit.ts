// Migration 10 (extraction): the photo credit and dateline printed with a caption ("REUTERS/Jane Doe",
// "新华社记者 才扬 摄", "中央社記者某某桃園傳真 105年3月19日"), kept apart from the caption so that sentence
// alignment and the C-measure see the caption alone; exported as source_credit / target_credit.
import type { Migration } from './types.js';

export const m010Credit: Migration = {
  version: 10,
  name: 'items: credit',
  up: `ALTER TABLE items ADD COLUMN credit TEXT;`,
  pg: `ALTER TABLE items ADD COLUMN credit TEXT;`,
};
