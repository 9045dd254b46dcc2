import { expect } from 'chai';
import { isCreditOrDateline, splitCredit } from '../src/lib/captions/credit.js';

// Captions are written for these tests in the styles of the agencies and papers named; none is copied from a page.
describe('ingest: credit and dateline recogniser', () => {
  describe('splitCredit, English', () => {
    const cases: [string, { caption: string; credit?: string; dateline?: string }][] = [
      // Reuters: credit after the last sentence, no brackets; the date before it stays in the caption.
      ['A trader works on the floor in Tokyo, Japan, March 19, 2016. REUTERS/Jane Roe/File Photo', { caption: 'A trader works on the floor in Tokyo, Japan, March 19, 2016.', credit: 'REUTERS/Jane Roe/File Photo' }],
      // AP in brackets, with "File".
      ['A lawmaker speaks at the Statehouse in Indianapolis. (AP Photo/John Doe, File)', { caption: 'A lawmaker speaks at the Statehouse in Indianapolis.', credit: 'AP Photo/John Doe, File' }],
      // Xinhua English photo stories.
      ['Photo taken on March 19, 2016 shows tulips in a park in Beijing. (Xinhua/Li Ming)', { caption: 'Photo taken on March 19, 2016 shows tulips in a park in Beijing.', credit: 'Xinhua/Li Ming' }],
      // Guardian / Telegraph / Express labels.
      ['The burnt-out shell of the tower. Photograph: Ann Smith/Reuters', { caption: 'The burnt-out shell of the tower.', credit: 'Photograph: Ann Smith/Reuters' }],
      ['A boiler in a cellar Photo: PA', { caption: 'A boiler in a cellar', credit: 'Photo: PA' }],
      // Photographer/outlet chains, an initial inside the name, a sentence end that is not part of the name.
      ['A store shelf in Seattle. (Ellen M. Roe / The Seattle Times)', { caption: 'A store shelf in Seattle.', credit: 'Ellen M. Roe / The Seattle Times' }],
      ['The mayor near the synagogue in Pittsburgh. Dan Frank/AFP/Getty Images', { caption: 'The mayor near the synagogue in Pittsburgh.', credit: 'Dan Frank/AFP/Getty Images' }],
      ['A road south of the port. Tara Roe for Rest of World', { caption: 'A road south of the port.', credit: 'Tara Roe for Rest of World' }],
      ['The old courthouse was dedicated in 2006. (Oregonian file photo)', { caption: 'The old courthouse was dedicated in 2006.', credit: 'Oregonian file photo' }],
      // A source's bare name in brackets after the last sentence; bracketed place words stay in the caption.
      ['Crowds gather at the waterfront in Portland, Oregon. (Boing Boing)', { caption: 'Crowds gather at the waterfront in Portland, Oregon.', credit: 'Boing Boing' }],
      ['The mayor and her deputy at the opening. (Left)', { caption: 'The mayor and her deputy at the opening. (Left)' }],
      // Round 8: a photographer in capitals and the outlet (Sun Media, Postmedia), a copyright line, "shared by … via".
      ['A captain enters the court on Friday. (JANE ROE, Sun Media)', { caption: 'A captain enters the court on Friday.', credit: 'JANE ROE, Sun Media' }],
      ['A pier at dusk in Halifax. (Regina Roe, Nova Scotia)', { caption: 'A pier at dusk in Halifax. (Regina Roe, Nova Scotia)' }],
      ['Few partners at the firms are women. © Ann Smith', { caption: 'Few partners at the firms are women.', credit: '© Ann Smith' }],
      ['Podcast © Studio Ten', { caption: 'Podcast © Studio Ten' }],
      ['A mural covers a stop sign. Photo shared by John Doe via REUTERS', { caption: 'A mural covers a stop sign.', credit: 'Photo shared by John Doe via REUTERS' }],
      // Stock libraries credited as agencies (online magazines): a handle or a studio name of any case before the
      // library; the library alone after the last sentence; never a phrase the caption ends with.
      ['Planes are good for smoothing an edge. woodworker_99 / Depositphotos.', { caption: 'Planes are good for smoothing an edge.', credit: 'woodworker_99 / Depositphotos.' }],
      ['A chisel can cut a clean mortise. Light of Day / Pixabay', { caption: 'A chisel can cut a clean mortise.', credit: 'Light of Day / Pixabay' }],
      ['A rasp shapes curves quickly. Jane Roe / Unsplash', { caption: 'A rasp shapes curves quickly.', credit: 'Jane Roe / Unsplash' }],
      ['You may want a block plane for end grain. Depositphotos.', { caption: 'You may want a block plane for end grain.', credit: 'Depositphotos.' }],
      ['The ridge at dawn, seen from the hut / Flickr', { caption: 'The ridge at dawn, seen from the hut / Flickr' }],
      ['Jordan Roe. Jane Doe/Getty', { caption: 'Jordan Roe.', credit: 'Jane Doe/Getty' }],
      ['The pair leave a restaurant in Malibu. BACKGRID', { caption: 'The pair leave a restaurant in Malibu.', credit: 'BACKGRID' }],
      ['Mega fans line the street.', { caption: 'Mega fans line the street.' }],
      ['The singer wears a linen suit and silver rings.Creative Director: Ann Roe.', { caption: 'The singer wears a linen suit and silver rings.', credit: 'Creative Director: Ann Roe.' }],
      ['Traders on the floor in London. Photographer: Jane Roe/Bloomberg', { caption: 'Traders on the floor in London.', credit: 'Photographer: Jane Roe/Bloomberg' }],
      ['Hair and makeup artists at work backstage in Paris.', { caption: 'Hair and makeup artists at work backstage in Paris.' }],
      ['Ann Smith at the gala. ann.smith_photo / Pexels', { caption: 'Ann Smith at the gala.', credit: 'ann.smith_photo / Pexels' }],
      // Round 9: the labels of pictures that are not photographs (games, tech, film, architecture and chart credits),
      // the stock agency before a "|"; the same words starting a caption stay in it.
      ['The boss fight takes place on a frozen lake. Screenshot: Game Weekly / River Studio', { caption: 'The boss fight takes place on a frozen lake.', credit: 'Screenshot: Game Weekly / River Studio' }],
      ['The tower would rise over the old rail yards. Rendering: Stone + Partners', { caption: 'The tower would rise over the old rail yards.', credit: 'Rendering: Stone + Partners' }],
      ['Office attendance by weekday. Data courtesy of Flex Research', { caption: 'Office attendance by weekday.', credit: 'Data courtesy of Flex Research' }],
      ['Stills from the film show the cast on set.', { caption: 'Stills from the film show the cast on set.' }],
      ['Rendering of the new tower by the river.', { caption: 'Rendering of the new tower by the river.' }],
      // Getty's leading dateline and a wire dateline.
      ['WASHINGTON, DC - FEBRUARY 26: Senators arrive at the Capitol. (Photo by John Doe/Getty Images)', { caption: 'Senators arrive at the Capitol.', credit: 'Photo by John Doe/Getty Images', dateline: 'WASHINGTON, DC - FEBRUARY 26' }],
      ['BEIJING, March 19 (Xinhua) -- Tourists visit the Palace Museum.', { caption: 'Tourists visit the Palace Museum.', dateline: 'BEIJING, March 19 (Xinhua)' }],
      // No credit: dates, slashes and capitalised words inside the caption are left alone.
      ['Cars slide on an icy road in Albuquerque on November 24.', { caption: 'Cars slide on an icy road in Albuquerque on November 24.' }],
      ['Supporters hold signs for Trump/Pence', { caption: 'Supporters hold signs for Trump/Pence' }],
      ['Firefighters at the scene in Mumbai May 13, 2014.', { caption: 'Firefighters at the scene in Mumbai May 13, 2014.' }],
    ];
    for (const [text, want] of cases) it(text.slice(0, 70), () => expect(splitCredit(text, 'en')).to.deep.equal(want));
  });

  describe('splitCredit, Chinese', () => {
    const cases: [string, { caption: string; credit?: string; dateline?: string }][] = [
      // CNA (Taiwan): a provider credit, a fax credit and an ROC date, all after the caption.
      ['民宅清晨起火，一名男子命喪火窟。 （消防局提供） 中央社記者王小明桃園傳真 105年3月19日', { caption: '民宅清晨起火，一名男子命喪火窟。', credit: '消防局提供 中央社記者王小明桃園傳真', dateline: '105年3月19日' }],
      ['圖為民眾在超市購買雞蛋。（中央社記者張大同攝 112年2月16日）', { caption: '圖為民眾在超市購買雞蛋。', credit: '中央社記者張大同攝', dateline: '112年2月16日' }],
      // Xinhua, chinanews, city papers.
      ['2月17日，护士在献血浆时拍照留念。新华社记者 李明 摄', { caption: '2月17日，护士在献血浆时拍照留念。', credit: '新华社记者 李明 摄' }],
      ['游客在故宫午门前拍照。中新社记者 王芳 摄', { caption: '游客在故宫午门前拍照。', credit: '中新社记者 王芳 摄' }],
      ['10月4日，旅游专列开往襄阳。通讯员刘娟 摄', { caption: '10月4日，旅游专列开往襄阳。', credit: '通讯员刘娟 摄' }],
      ['孩子们在操场上做游戏。（新华社发 赵明 摄）', { caption: '孩子们在操场上做游戏。', credit: '新华社发 赵明 摄' }],
      // Providers.
      ['警方找到的求救纸条。沙坪坝区公安分局供图', { caption: '警方找到的求救纸条。', credit: '沙坪坝区公安分局供图' }],
      ['毕业生在双选会现场咨询。（学院提供）', { caption: '毕业生在双选会现场咨询。', credit: '学院提供' }],
      // Taiwanese labels "圖／…", "記者…攝".
      ['警消到場時男子已無生命跡象。（圖／翻攝畫面）', { caption: '警消到場時男子已無生命跡象。', credit: '圖／翻攝畫面' }],
      ['女子從5樓墜落身亡。（記者林大華攝）', { caption: '女子從5樓墜落身亡。', credit: '記者林大華攝' }],
      // Screenshots and agency names.
      ['加拿大大叔在公园里拍视频 视频截图', { caption: '加拿大大叔在公园里拍视频', credit: '视频截图' }],
      ['在公园晨练的老年人。（视觉中国）', { caption: '在公园晨练的老年人。', credit: '视觉中国' }],
      // An agency's file photo, with or without a space: "视觉中国 资料", "中新社资料图".
      ['共享充电宝。视觉中国 资料', { caption: '共享充电宝。', credit: '视觉中国 资料' }],
      ['市民在公园赏花。中新社资料图', { caption: '市民在公园赏花。', credit: '中新社资料图' }],
      ['这是他留下的全部资料', { caption: '这是他留下的全部资料' }],
      ['网友发布的现场照片 图：@某某微博截图', { caption: '网友发布的现场照片', credit: '图：@某某微博截图' }],
      // Wire dateline at the start.
      ['新华社北京3月19日电 图为会场一角。', { caption: '图为会场一角。', dateline: '新华社北京3月19日电' }],
      // No credit: verbs that look like credit words inside a sentence.
      ['他在北京拍摄', { caption: '他在北京拍摄' }],
      ['公司为居民提供免费午餐。', { caption: '公司为居民提供免费午餐。' }],
      ['3月19日，市民在公园赏花。', { caption: '3月19日，市民在公园赏花。' }],
    ];
    for (const [text, want] of cases) it(text.slice(0, 40), () => expect(splitCredit(text, 'zh')).to.deep.equal(want));
  });

  it('gives an empty caption when the whole text is a credit or a dateline', () => {
    expect(splitCredit('(AP Photo/John Doe)', 'en')).to.deep.equal({ caption: '', credit: 'AP Photo/John Doe' });
    expect(splitCredit('图片来源：网络', 'zh')).to.deep.equal({ caption: '', credit: '图片来源：网络' });
    expect(splitCredit('105年3月19日', 'zh')).to.deep.equal({ caption: '', dateline: '105年3月19日' });
    expect(splitCredit('   ', 'en')).to.deep.equal({ caption: '' });
    // A compound credit label in the plural, as the bare "Credits:" already is (before: "Image" was left as a caption).
    expect(splitCredit('Image Credits: Jane Roe / Example Tech', 'en')).to.deep.equal({ caption: '', credit: 'Image Credits: Jane Roe / Example Tech' });
    expect(splitCredit('Photo credits: John Doe', 'en')).to.deep.equal({ caption: '', credit: 'Photo credits: John Doe' });
    // A source's name alone in brackets (a listicle's lending brand), or a composite's sources one by one.
    expect(splitCredit('(Harbor Mill)', 'en')).to.deep.equal({ caption: '', credit: 'Harbor Mill' });
    expect(splitCredit('(J Stone & Sons)', 'en')).to.deep.equal({ caption: '', credit: 'J Stone & Sons' });
    expect(splitCredit('(Left: Harbor Mill, Middle: Stone Hill, Right: Old Crow)', 'en')).to.deep.equal({ caption: '', credit: 'Left: Harbor Mill, Middle: Stone Hill, Right: Old Crow' });
    // Bracketed words that are not a source stay caption text.
    expect(splitCredit('(Left)', 'en').caption).to.equal('(Left)');
    expect(splitCredit('(Pictured: the mayor at the opening)', 'en').caption).to.equal('(Pictured: the mayor at the opening)');
  });

  it('isCreditOrDateline: credit and dateline fragments are not sentences', () => {
    const yes: [string, 'en' | 'zh'][] = [
      ['REUTERS/Kim Lee', 'en'], ['(Xinhua/Li Ming)', 'en'], ['Photo: AP', 'en'], ['AP Photo/John Doe, File', 'en'], ['Getty Images', 'en'],
      ['March 19, 2016', 'en'], ['WASHINGTON, DC - FEBRUARY 26:', 'en'], ['Credit...John Doe for The New York Times', 'en'],
      ['105年3月19日', 'zh'], ['中央社記者王小明桃園傳真 105年3月19日', 'zh'], ['（消防局提供）', 'zh'], ['新华社记者 李明 摄', 'zh'],
      ['圖／聯合報系資料照', 'zh'], ['资料图', 'zh'], ['（受访者供图）', 'zh'], ['2016-03-19', 'zh'],
    ];
    const no: [string, 'en' | 'zh'][] = [
      ['Photo taken on March 19, 2016 shows a view of the city.', 'en'], ['Picture taken March 1, 2016.', 'en'],
      ['The mayor speaks to reporters.', 'en'], ['Smith said the photo was taken in 2006.', 'en'], ['', 'en'],
      ['图为会场一角。', 'zh'], ['他喜欢摄影', 'zh'], ['3月19日，市民在公园赏花。', 'zh'], ['公司为居民提供免费午餐。', 'zh'],
    ];
    for (const [f, l] of yes) expect(isCreditOrDateline(f, l), f).to.equal(true);
    for (const [f, l] of no) expect(isCreditOrDateline(f, l), f).to.equal(false);
  });
});
