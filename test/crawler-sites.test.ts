// The shipped site profiles against synthetic pages in the shape of the saved pages of those sites
// (fixtures/crawler/*.html, small hand-written copies of the markup around the photos).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { extractPairs } from '../src/crawler/extract/index.js';
import { loadSites, profileFor } from '../src/crawler/sites.js';

const fixture = (name: string) => fs.readFileSync(path.join('fixtures', 'crawler', name));

describe('crawler: shipped site profiles on pages shaped like their sites', () => {
  const sites = loadSites();
  const run = (file: string, url: string, expectedSite: string) => {
    const site = profileFor(url, sites);
    expect(site?.name).to.equal(expectedSite);
    return extractPairs(fixture(file), { url, selectors: site!.captions, lang: site!.language }).pairs;
  };

  it('bbc-en: srcset image after a grey placeholder, hidden "Image caption," prefix, related links dropped', () => {
    expect(run('bbc-en.html', 'https://www.bbc.com/news/articles/c4g0y8x1z2lo', 'bbc-en')).to.deep.equal([
      { image_url: 'https://ichef.bbci.co.uk/news/480/cpsprodpb/aaaa/live/photo-1.jpg.webp', caption: 'Nato was founded in Washington DC in 1949' },
    ]);
  });

  it('bbc-zh: p.caption inside div.image; story-list thumbnails dropped', () => {
    expect(run('bbc-zh.html', 'http://www.bbc.co.uk/zhongwen/simp/chinese_news/2012/12/121210_hongkong_politics.shtml', 'bbc-zh')).to.deep.equal([
      { image_url: 'http://wscdn.bbc.co.uk/worldservice/assets/images/2012/12/06/leung_304x171_ap.jpg', caption: '梁振英同时遭到泛民主派和亲北京阵营议员质问。' },
    ]);
  });

  it('reuters: slideshow photo inside a gallery link, ".captionText" with its counter and credit', () => {
    expect(run('reuters.html', 'http://uk.reuters.com/article/2014/12/30/uk-indonesia-airplane-idUKKBN0K601G20141230', 'reuters')).to.deep.equal([
      {
        image_url: 'http://s1.reutersmedia.net/resources/r/?m=02&d=20141230&i=1008960367&w=&ll=580',
        caption: 'A Republic of Singapore Air Force personnel surveys the waters during a search operation December 30, 2014.',
        credit: 'Credit: Reuters/Edgar Su',
      },
    ]);
  });

  it('xinhua-zh: centred image paragraph, caption in the next <p><font>, relative src', () => {
    expect(run('xinhua-zh.html', 'http://www.xinhuanet.com/local/2020-02/19/c_1125597921.htm', 'xinhua-zh')).to.deep.equal([
      { image_url: 'http://www.xinhuanet.com/local/2020-02/19/1125597921_15821148894141n.jpg', caption: '2月17日，在武汉血液中心，康复病人在献血浆时拍照留念。', credit: '新华社记者 才扬 摄' },
    ]);
  });

  it('xinhua-en: photo story paragraphs ending in "(Xinhua/Name)"', () => {
    const pairs = run('xinhua-en.html', 'https://english.news.cn/20240512/abc123/c.html', 'xinhua-en');
    expect(pairs.map((p) => p.image_url)).to.deep.equal(['https://english.news.cn/20240512/abc123/20240512/abc123/20240512abc_1.jpg', 'https://english.news.cn/20240512/abc123/20240512/abc123/20240512abc_2.jpg']);
    expect(pairs[0]).to.deep.include({ caption: 'People visit a flower exhibition in Beijing, capital of China, May 12, 2024.', credit: 'Xinhua/Li Xin' });
  });

  it('chinanews: div.left_ph photo with its centred div.left_name caption; the logo dropped', () => {
    expect(run('chinanews.html', 'https://www.chinanews.com.cn/sh/2020/03-11/9121212.shtml', 'chinanews')).to.deep.equal([
      { image_url: 'https://i2.chinanews.com/simg/cmshd/2020/03/11/photo.jpg', caption: '3月10日，北京市民在公园内踏青。', credit: '中新社记者 杜洋 摄' },
    ]);
  });

  it('un-news-zh: figure/figcaption with a credit span', () => {
    expect(run('un-news-zh.html', 'https://news.un.org/zh/story/2024/05/1128251', 'un-news-zh')).to.deep.equal([
      { image_url: 'https://news.un.org/sites/news.un.org/files/styles/large/public/thumbnails/2024/05/photo.jpg', caption: '加沙南部拉法的流离失所者。', credit: '© UNICEF/Eyad El Baba' },
    ]);
  });
});
