// The extractor's shortcuts for heavy pages give the answers the long way gives: the per-page memo of caption texts
// (caption-text.ts withCaptionMemo), and the test a script's brace-delimited piece passes before it is parsed as JSON
// (images.ts scriptImages), and decoding without chardet when the page declares its charset (decode.ts).
import { expect } from 'chai';
import * as cheerio from 'cheerio';
import { cleanCaption, isCreditOnly, withCaptionMemo } from '../src/lib/extraction/caption-text.js';
import { scriptImages } from '../src/lib/extraction/images.js';
import { decodeHtml } from '../src/lib/extraction/decode.js';
import iconv from 'iconv-lite';

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

describe('extraction shortcuts: decoding asks chardet only when the page declares no charset iconv knows', () => {
  const body = Array.from({ length: 20 }, (_, i) => `<p>图为市民在公园里赏花，第${i + 1}段记者在现场看到了很多情况。</p>`).join('');
  const html = (meta: string) => `<html><head>${meta}<title>市民赏花</title></head><body>${body}</body></html>`;

  it('a declared legacy charset is used as declared; an unknown or missing one is guessed from the bytes', () => {
    const big5 = decodeHtml(iconv.encode(`<html><head><meta charset="big5"></head><body><p>圖為市民在公園裡賞花。</p></body></html>`, 'big5'));
    expect([big5.charset, big5.text.includes('圖為市民在公園裡賞花')]).to.deep.equal(['big5', true]);
    for (const meta of ['<meta charset="x-made-up">', '']) {
      const gbk = decodeHtml(iconv.encode(html(meta), 'gbk'));
      expect([gbk.charset, gbk.text.includes('第20段记者在现场')]).to.deep.equal(['gb18030', true]);
    }
    const latin = decodeHtml(Buffer.from('<html><head><meta charset="x-made-up"></head><body><p>Caf\xe9 owners</p></body></html>', 'latin1'));
    expect(latin.text).to.include('Café owners');
  });
});
