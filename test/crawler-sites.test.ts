// The shipped site profiles against pages written by hand in the structure of each site
// (fixtures/crawler/*.html; each fixture names the saved pages where its structure was seen, or says that none
// was available). Every profile in config/sites has a fixture here.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { extractPairs } from '../src/lib/extraction/index.js';
import { loadSites, profileFor } from '../src/stages/crawl/sites.js';

const fixture = (name: string) => fs.readFileSync(path.join('fixtures', 'crawler', name));

describe('crawler: shipped site profiles on pages in the structure of their sites', () => {
  const sites = loadSites();
  const run = (file: string, url: string, expectedSite: string) => {
    const site = profileFor(url, sites);
    expect(site?.name).to.equal(expectedSite);
    return extractPairs(fixture(file), { url, selectors: site!.captions, lang: site!.language }).pairs;
  };

  it('every shipped profile has a fixture page', () => {
    const fixtures = fs.readdirSync(path.join('fixtures', 'crawler')).filter((f) => f.endsWith('.html'));
    for (const s of sites) expect(fixtures, s.name).to.include(`${s.name}.html`);
  });

  it('bbc-en: srcset photo after a grey placeholder, credit span over the photo, figcaption in a caption block; related thumbnails dropped', () => {
    expect(run('bbc-en.html', 'https://www.bbc.com/news/articles/c4g0y8x1z2lo', 'bbc-en')).to.deep.equal([
      { image_url: 'https://ichef.bbci.co.uk/news/480/cpsprodpb/aaaa/live/photo-1.jpg.webp', caption: 'Delegates gathered in the capital for the signing of the treaty', credit: 'Getty Images' },
      { image_url: 'https://ichef.bbci.co.uk/news/480/cpsprodpb/bbbb/live/photo-2.jpg.webp', caption: 'Cheese makers showed their products at the fair', credit: 'PA Media' },
    ]);
  });

  it('bbc-zh: p.caption after the photo in div.image; story-list thumbnails dropped', () => {
    expect(run('bbc-zh.html', 'http://www.bbc.co.uk/zhongwen/simp/chinese_news/2012/12/121210_test.shtml', 'bbc-zh')).to.deep.equal([
      { image_url: 'http://wscdn.bbc.co.uk/worldservice/assets/images/2012/12/06/test_304x171.jpg', caption: '行政长官在立法会接受议员质询。' },
    ]);
  });

  it('reuters: slideshow photo in a gallery link and a related photo, .captionText with counter and p.credit; video thumbnails dropped', () => {
    expect(run('reuters.html', 'http://uk.reuters.com/article/2014/12/30/test-story-idUKKBN0K601G20141230', 'reuters')).to.deep.equal([
      {
        image_url: 'http://s1.reutersmedia.net/resources/r/?m=02&d=20141230&i=1000000001&w=&ll=580',
        caption: 'Rescue boats search the sea for debris during a search operation off the coast December 30, 2014.',
        credit: 'Credit: Reuters/Jane Roe',
      },
      {
        image_url: 'http://s3.reutersmedia.net/resources/r/?m=02&d=20141230&i=1000000002&w=580',
        caption: 'Officials speak to reporters at the airport in the city May 13, 2014.',
        credit: 'Credit: Reuters/John Doe/Files',
      },
    ]);
  });

  it('xinhua-zh: centred photo, caption in the next <p><font> with its credit; uncaptioned photos and the 2024 justified body paragraph give nothing', () => {
    expect(run('xinhua-zh.html', 'http://www.xinhuanet.com/local/2020-02/19/c_1125000001.htm', 'xinhua-zh')).to.deep.equal([
      { image_url: 'http://www.xinhuanet.com/local/2020-02/19/1125000001_15820000000001n.jpg', caption: '2月17日，在血液中心，康复病人在献血浆时拍照留念。', credit: '新华社记者 李明 摄' },
    ]);
  });

  it('xinhua-en: photo story, each <p><img></p> followed by a <p> holding a small coloured <span> with "(Xinhua/Name)"', () => {
    const pairs = run('xinhua-en.html', 'https://english.news.cn/20240512/abc123/c.html', 'xinhua-en');
    expect(pairs).to.deep.equal([
      { image_url: 'https://english.news.cn/20240512/abc123/20240512/abc123/20240512abc_1.jpg', caption: 'People visit a flower exhibition in Beijing, capital of China, May 12, 2024.', credit: 'Xinhua/Li Ming' },
      { image_url: 'https://english.news.cn/20240512/abc123/20240512/abc123/20240512abc_2.jpg', caption: 'A child poses for photos at the flower exhibition in Beijing, May 12, 2024.', credit: 'Xinhua/Li Ming' },
    ]);
  });

  it('chinanews: div.left_ph photo with its div.left_name caption and credit; the logo and the interaction icon dropped', () => {
    expect(run('chinanews.html', 'https://www.chinanews.com.cn/sh/2020/03-11/9120000.shtml', 'chinanews')).to.deep.equal([
      { image_url: 'https://i2.chinanews.com/simg/cmshd/2020/03/11/test-photo.jpg', caption: '3月10日，市民在公园内踏青赏花。', credit: '中新社记者 王芳 摄' },
    ]);
  });

  it('un-news-en and un-news-zh: figure/figcaption with a credit span', () => {
    expect(run('un-news-en.html', 'https://news.un.org/en/story/2024/05/1140000', 'un-news-en')).to.deep.equal([
      { image_url: 'https://news.un.org/sites/news.un.org/files/styles/large/public/thumbnails/2024/05/test-en.jpg', caption: 'Displaced families wait for aid in the south of the country.', credit: '© UNICEF/Jane Roe' },
    ]);
    expect(run('un-news-zh.html', 'https://news.un.org/zh/story/2024/05/1140001', 'un-news-zh')).to.deep.equal([
      { image_url: 'https://news.un.org/sites/news.un.org/files/styles/large/public/thumbnails/2024/05/test-zh.jpg', caption: '南部的流离失所家庭在等待援助。', credit: '© UNICEF/Jane Roe' },
    ]);
  });
});
