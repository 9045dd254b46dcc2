// The extractor's shortcuts for heavy pages give the answers the long way gives: the per-page memo of caption texts
// (caption-text.ts withCaptionMemo), and the test a script's brace-delimited piece passes before it is parsed as JSON
// (images.ts scriptImages).
import { expect } from 'chai';
import * as cheerio from 'cheerio';
import { cleanCaption, isCreditOnly, withCaptionMemo } from '../src/lib/extraction/caption-text.js';
import { scriptImages } from '../src/lib/extraction/images.js';

const texts = [
  'Firefighters at the scene on Monday. (AP Photo/Jane Doe)',
  'Photo: Reuters',
  'Getty Images',
  '图为救援现场。新华社记者 王明 摄',
  '（消防局提供）',
  'A market stall in the old town, 2019',
  '',
  '   ',
];

describe('extraction shortcuts: the same answers as the long way', () => {
  it('cleanCaption and isCreditOnly under the per-page memo, asked twice, with and without credit and language', () => {
    const plain = texts.flatMap((t) => [cleanCaption(t), cleanCaption(t, 'Staff'), cleanCaption(t, null, 'en'), cleanCaption(t, undefined, 'zh'), isCreditOnly(t), isCreditOnly(t, 'zh')]);
    const memoised = withCaptionMemo(() => [1, 2].flatMap(() => texts.flatMap((t) => [cleanCaption(t), cleanCaption(t, 'Staff'), cleanCaption(t, null, 'en'), cleanCaption(t, undefined, 'zh'), isCreditOnly(t), isCreditOnly(t, 'zh')])));
    expect(memoised).to.deep.equal([...plain, ...plain]);
  });

  it('a caller changing the answer it got does not change the next answer', () => {
    withCaptionMemo(() => {
      const a = cleanCaption(texts[0]!)!;
      a.caption = 'changed';
      delete a.credit;
      expect(cleanCaption(texts[0]!)).to.deep.equal(cleanCaption(texts[0]!, undefined));
      expect(cleanCaption(texts[0]!)!.caption).to.not.equal('changed');
    });
  });

  it('a photo in a script piece is found however its key or URL is written (JSON escapes included), and none is made up', () => {
    const $ = cheerio.load(`<script>window.__DATA__ = {"slides": [
      {"url": "https://cdn.example.com/a/harbour.jpg", "caption": "Boats in the harbour at dawn."},
      {"src": "https:\\/\\/cdn.example.com\\/images\\/market", "description": "The Saturday market.", "credit": "Jo Bloggs"},
      {"\\u0069mage": "https://cdn.example.com/p/town-hall.png", "capti\\u006fn": "The town hall lit up."},
      {"image": "https://cdn.example.com/p/logo.svg", "caption": "A logo, never a photo."},
      {"title": "A story with no picture at all", "description": "Just words here."}
    ]};</script>`);
    expect(scriptImages($, 'https://news.example.com/story').map((x) => [x.url, x.caption, x.credit ?? null])).to.deep.equal([
      ['https://cdn.example.com/a/harbour.jpg', 'Boats in the harbour at dawn.', null],
      ['https://cdn.example.com/images/market', 'The Saturday market.', 'Jo Bloggs'],
      ['https://cdn.example.com/p/town-hall.png', 'The town hall lit up.', null],
    ]);
  });
});
