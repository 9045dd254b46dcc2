// Photo credits and datelines printed with a news caption, in English and Chinese: recognised so that the
// caption text alone goes to `caption` and the rest to the item's `credit`, and so that sentence segmentation
// does not take "REUTERS/Kim Kyung-Hoon" or "105年3月19日" for a sentence. Shared by the crawler's extractor,
// the import manifest and the sentence aligner.
//
// Why hand-written: no npm package recognises agency credits (none found on the registry; caption credit lines are
// a newsroom convention, not a general NLP task). The patterns are conventions of agencies and newsrooms, each
// seen on several sites (the sites are named next to each pattern; "seen" = in the pages of
// ../shared/data/extraction-news and extraction-dev, and in public copies of agency pages):
//   English
//   - "Photo: X", "Photograph: X", "Image: X", "Credit: X", "Photo by X", "Credit…X": the Guardian, Telegraph,
//     Express, phys.org, Cayman Compass, California Globe, The Intercept, NYT ("Credit…").
//   - agency "/" photographer: "REUTERS/Name", "AP Photo/Name", "AFP PHOTO / NAME", "(Xinhua/Name)", "EPA/NAME":
//     Reuters, Washington Times, ABC News, Xinhua English, China Daily, NY Daily News.
//   - photographer "/" outlet(s): "Evan Vucci/AP Photo", "Juni Kriswanto/AFP/Getty Images", "Matt Stone/Boston
//     Herald", "Ellen M. Banner / The Seattle Times": NPR, Washington Post, Globe and Mail, Boston Herald, Seattle
//     Times, Chicago Tribune, The Atlantic, Euronews.
//   - "Name for Outlet", "X via Getty Images", "Courtesy of X", "file photo", "Handout": Rest of World, NYT,
//     The Intercept, Oregonian, Patch.
//   - datelines: Getty's "CITY, COUNTRY - MAY 03:" and the agency wire's "BEIJING, March 19 (Xinhua) --" at the
//     start; a date standing alone after the caption at the end.
//   Chinese
//   - "…摄"/"…攝" (记者/記者/通讯员, agency or paper first): Xinhua, chinanews (中新社), CNA (中央社), Apple Daily,
//     cjn.cn, sina, Liberty Times (記者…攝).
//   - "…供图"/"…提供"/"…供稿": 163 (via 华龙网), ifeng, youth.cn, CNA ("（消防局提供）"), UDN.
//   - "图/…", "圖／…", "图：…", "图片来源：…", "照片：…": SETN, ETtoday, LTN, UDN, sina, 163.
//   - "…傳真" with an ROC date ("中央社記者某某桃園傳真 105年3月19日"): CNA, and the papers that reprint it.
//   - agency names alone or in brackets ("（视觉中国）", "新华社发", "路透社"): sina, 163, Xinhua, ifeng.
//   - "视频截图", "网络图片", "资料图": sina, 163, people.cn.

export type CreditLang = 'en' | 'zh';

export interface CreditSplit {
  /** The caption without its credit and dateline. Empty when the whole text was a credit. */
  caption: string;
  /** The credit pieces as printed (outer brackets dropped), joined by a space. */
  credit?: string;
  /** A dateline printed with the caption ("105年3月19日", "WASHINGTON, DC - FEBRUARY 26"). */
  dateline?: string;
}

const MONTH = '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
const WEEKDAY = '(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day';

// English news-photo agencies, photo desks and stock libraries (names as they are printed in credits; online
// magazines credit free and paid stock photos as "Name / Pexels", "Name via Unsplash", "Wikimedia Commons"; celebrity
// and entertainment pages their paparazzi agencies, "Name / MEGA", "BACKGRID", "Name/GC Images").
const EN_AGENCY =
  '(?:AP|A\\.P\\.|AFP|EPA(?:-EFE)?|REUTERS|Reuters|XINHUA|Xinhua|ANP|AAP|DPA|dpa|PA(?: Wire| Images| Media)?|ANSA|EFE|KCNA|Yonhap|UPI|IANS|PTI|ANI|Kyodo|TASS|Sputnik|Getty(?: Images)?|China Daily|CNS|VCG|CFP|IC|NurPhoto|Anadolu(?: Agency)?|SOPA Images|ZUMA(?: Press)?|Bloomberg|WireImage|Shutterstock|iStock(?:photo)?|Alamy|Unsplash|Pexels|Pixabay|Depositphotos|Dreamstime|Adobe Stock|Wikimedia(?: Commons)?|Flickr|MEGA|BACKGRID|Backgrid|Splash News|GC Images|INSTARimages|Bauer-Griffin|Rex Features|Capital Pictures|Imagine China|CGTN|Associated Press|Agence France-Presse|AP Images|USA TODAY Sports|USATSI|Handout|NASA|Pool|POOL)';

// A capitalised word; a dot only as an initial ("Ellen M. Banner"), so "Washington. Evan Vucci/AP" is not one name.
const EN_WORD = "(?:\\p{Lu}\\.|[\\p{Lu}\\d][\\p{L}\\d'’&-]*)";
const EN_NAME = `${EN_WORD}(?:\\s+(?:${EN_WORD}|de|da|van|von|der|del|la|le|bin|al|of|the|and|for|&))*`;

// Whole-fragment credit patterns (the fragment has its outer brackets removed).
const EN_CREDIT: RegExp[] = [
  // "Photo: X", "Photographs: X and Y", "Image: Getty", "Credit: Reuters/Name", "Photo by X", "Credit…Name", a
  // chart's "Sources: Bureau of Economic Analysis, Morningstar.", and the shoot credits of magazine photos
  // ("Photographer: X. Creative Director: Y.", "Styling: Z", "Photographer: Name/Bloomberg": teenvogue, cosmopolitan,
  // bloomberg)
  /^(?:(?:AP |AFP |Reuters |Xinhua |File |Staff |Handout )?(?:photo(?:graph)?s?|pictures?|pics?|images?|credits?|(?:photo|image|picture) credits?|illustrations?|graphics?|video|footage|sources?|data sources?|photo illustration|photograph(?:ers?|ed)|styling|stylists?|styled|creative direct(?:ors?|ion)|art direct(?:ors?|ion)|hair(?: and make-?up)?|make-?up|grooming|set design(?:ers?)?)|file)\s*(?::|：|…|\.\.\.|\/|by\b|courtesy(?: of)?\b|provided by\b|shared by\b|from\b)\s*\S.{0,110}$/iu,
  // the labels of pictures that are not photographs: "Screenshot: Kotaku / Capcom", "Screengrab: BBC", "Still: Netflix",
  // "Rendering: Foster + Partners", "GIF: Nintendo" (games, tech, film and architecture pages); only before ":", "/",
  // "by" or "via" ("Stills from the film show…", "Rendering of the tower" are captions)
  /^(?:screen ?shots?|screen ?grabs?|screen captures?|(?:video )?stills?|renderings?|renders?|gifs?|animation|data(?: source)?)\s*(?::|：|\/|by\b|via\b|courtesy(?: of)?\b)\s*\S.{0,110}$/iu,
  // agency "/" photographer: "REUTERS/Kim Kyung-Hoon", "AP Photo/Evan Vucci, File", "AFP PHOTO / JOHN DOE", "Xinhua/Li Xin";
  // or "|": "Getty Images | Jane Roe" (the stock agency first, as lifestyle magazines print it)
  new RegExp(`^${EN_AGENCY}(?:\\s+(?:Photo|PHOTO|Photos|Pictures|Images|Photo Illustration|TV|Video|file photo))?\\s*[\\/|]\\s*[^/]{1,60}(?:\\/[^/]{1,40}){0,3}$`, 'u'),
  // photographer "/" outlet(s): "Juni Kriswanto/AFP/Getty Images", "Ellen M. Banner / The Seattle Times"
  new RegExp(`^(?:${EN_WORD}\\s+){1,3}${EN_WORD}\\s*\\/\\s*(?:${EN_AGENCY}|${EN_NAME})(?:\\s+(?:Photo|Images|file photo|File))?(?:,?\\s*File)?(?:\\s*\\/\\s*(?:${EN_AGENCY}|${EN_NAME})){0,3}(?:\\s+via\\s+${EN_NAME})?$`, 'u'),
  // "Courtesy of X", "Courtesy X"
  /^courtesy(?: of)?\s+\S.{0,80}$/iu,
  // "Oregonian file photo", "Staff photo", "Handout", "File photo", "Submitted photo"
  // (an outlet may precede its own file photo; a name before "Submitted photo" is the caption, not the credit)
  /^(?:(?:[\p{Lu}][\p{L}.'’-]*\s+){0,3}(?:file|staff|handout|courtesy|pool|archive|stock)\s+(?:photos?|images?|pictures?)(?:\s+by\s+.{1,60})?|(?:submitted|contributed|supplied)\s+(?:photos?|images?|pictures?)(?:\s+by\s+.{1,60})?|handout|supplied|file|file photo|pool photo)$/iu,
];
// One to four words of any case, then "/" and an agency or stock library: "forestpath / Depositphotos.", "Beauty of
// Nature / Pixabay" (a stock photographer's handle or studio name is not a capitalised name, so the photographer "/"
// outlet pattern misses it; the agency at the end is what makes it a credit). Only after a sentence end; a word holds
// a dot only between letters ("ann.roe") or after a company suffix ("MOVI Inc. / MEGA"), so no sentence ("Jordan
// Peele. Jane Roe/Getty") is read as one credit.
const HANDLE = "(?:(?:Inc|Ltd|Co|Corp|LLC|Jr|Sr)\\.|[\\p{L}\\d@](?:[\\p{L}\\d'’&_@-]|\\.(?=[\\p{L}\\d]))*)";
const STOCK_TAIL = new RegExp(`^${HANDLE}(?:\\s+${HANDLE}){0,3}\\s*\\/\\s*${EN_AGENCY}\\.?$`, 'u');
// Only after a sentence end or inside brackets (a bare name after a space is too often the caption's own words).
const EN_CREDIT_STRONG: RegExp[] = [
  STOCK_TAIL,
  // a one-word photographer: "(DrMikeBaxter/Wikipedia)", "(Bheki/Reuters)"
  new RegExp(`^${EN_WORD}\\s*\\/\\s*(?:${EN_AGENCY}|${EN_NAME})(?:\\s*\\/\\s*(?:${EN_AGENCY}|${EN_NAME})){0,3}$`, 'u'),
  // an agency alone: "(Xinhua)", "Getty Images", "AP Photo", "Reuters file photo", "Depositphotos."
  new RegExp(`^${EN_AGENCY}(?:\\s+(?:Photo|PHOTO|Photos|Images|Pictures|file photo|File Photo|File|Video|TV))?\\.?$`, 'u'),
  // an outlet and who lent it: "(People's Daily Online/courtesy of the National Forestry Administration)"
  new RegExp(`^${EN_NAME}\\s*\\/\\s*(?:[Cc]ourtesy(?: of)?|[Pp]hoto by|[Pp]rovided by)\\s+\\S.{0,100}$`, 'u'),
  // an outlet alone: "(The Independent)", "(The White House)"
  /^The(?:\s+[\p{Lu}][\p{L}&.'’-]*){1,4}$/u,
  // "Tara Atkinson for Rest of World", "Tom Brenner for The Washington Post via Getty Images"
  new RegExp(`^(?:${EN_WORD}\\s+){0,3}${EN_WORD}\\s+(?:for|via)\\s+${EN_NAME}(?:\\s+via\\s+${EN_NAME})?$`, 'u'),
  // a photographer in capitals, then the outlet: "(JANE ROE, Sun Media)", "(JOHN DOE, Postmedia News)" (the Sun Media
  // and Postmedia papers); the capitals tell it from a place ("(Regina, Saskatchewan)")
  new RegExp(`^[A-Z][A-Z'’.-]+(?:\\s+[A-Z][A-Z'’.-]+){1,3}\\s*,\\s*${EN_NAME}$`, 'u'),
  // a copyright line after the caption's last sentence: "… in 2019. © Jane Roe", "© 2023 Studio Pictures" (FT, studio
  // stills on entertainment sites, agency pictures on magazine sites)
  new RegExp(`^(?:©|\\(c\\)|Copyright)\\s*(?:\\d{4}\\s+)?${EN_NAME}(?:[.,]?\\s+All [Rr]ights [Rr]eserved\\.?)?$`, 'u'),
];

// A text that is only a source's name in brackets: "(Rabbit Hole)", "(J Henry & Sons)", or the sources of a composite
// photo one by one, "(Left: Blackened, Middle: Rabbit Hole, Right: WhistlePig)". Product and listicle photos credit
// the brand or studio that lent them this way (magazine listicles, studio stills, the parenthesised studio credit of
// the issue's precision list); a caption is not printed as a name alone in brackets.
const POSITION = '(?:left|right|middle|centre|center|top|bottom|above|below|inset|main|from left|l|r|c)';

// Chinese. Names are short runs of Han (or a Latin name), separated by spaces, "、" or "，".
const ZH_ORG = '(?:新华社|新華社|中新社|中新网|中新網|中央社|人民网|人民網|人民日报|人民日報|光明网|光明網|央视网?|央視網?|中国日报|中國日報|本报|本報|本台|本网|本網|[\\p{Script=Han}A-Za-z]{1,10}?(?:社|报|報|网|網|台|站|队|隊|部|局|中心|日报|日報|晚报|晚報))';
const ZH_ROLE = '(?:(?:特约|特約|实习|實習|摄影|攝影|首席)?(?:记者|記者|通讯员|通訊員|摄影师|攝影師|特派员|特派員)|(?:发|發))';
const ZH_NAMES = '(?:[\\p{Script=Han}·]{1,5}|[A-Za-z][A-Za-z.\' -]{1,30})(?:\\s*[、，,\\s]\\s*(?:[\\p{Script=Han}·]{1,5}|[A-Za-z][A-Za-z.\' -]{1,30})){0,3}';
const ZH_AGENCY =
  '(?:新华社|新華社|中新社|中新网|中新網|中央社|视觉中国|視覺中國|东方IC|東方IC|IC ?photo|CFP|图虫创意|圖蟲創意|全景网|全景網|人民视觉|人民視覺|路透社?|美联社|美聯社|法新社|欧新社|歐新社|欧洲新闻图片社|歐洲新聞圖片社|彭博社?|盖蒂图片社?|蓋蒂圖片社?|达志影像|達志影像|共同社|韩联社|韓聯社|塔斯社|Getty ?Images|VCG|AP|AFP|Reuters|EPA|Xinhua)';

const ZH_CREDIT: RegExp[] = [
  // "新华社记者 才扬 摄", "中央社記者張新偉攝", "通讯员刘娟 摄", "城市摄影队 周斌 摄", "王煌忠攝", "蔡雪婧/摄", "記者林悅翻攝"
  new RegExp(`^(?:${ZH_ORG}\\s*)?(?:${ZH_ROLE}\\s*)?${ZH_NAMES}\\s*[／/]?\\s*(?<!拍)(?:翻|航)?(?:摄|攝)$`, 'u'),
  // "記者XXX／攝影", "本报记者 X 拍摄": the longer verbs only with a role or a slash (else "他喜欢摄影" would pass)
  new RegExp(`^(?:${ZH_ORG}\\s*)?${ZH_ROLE}\\s*${ZH_NAMES}\\s*[／/]?\\s*(?:拍摄|拍攝|摄影|攝影)$`, 'u'),
  new RegExp(`^${ZH_NAMES}\\s*[／/]\\s*(?:拍摄|拍攝|摄影|攝影)$`, 'u'),
  // "新华社发（才扬摄）" and "新华社发 才扬 摄"
  new RegExp(`^${ZH_AGENCY}(?:发|發)\\s*[（(]?\\s*${ZH_NAMES}\\s*(?:摄|攝)[）)]?$`, 'u'),
  // "摄影：X", "攝影/X"
  /^(?:摄影|攝影|摄|攝|拍摄|拍攝)\s*[：:／/|｜]\s*\S.{0,30}$/u,
  // "小花母亲供图", "山东女子学院供图", "消防局提供", "受访者供图", "沙坪坝区公安分局供图 华龙网发"
  /^(?:由)?[^。！？!?；;，,（）()]{1,24}?(?:供图|供圖|提供|供稿|供片|供圖片|供照片)(?:\s+[\p{Script=Han}A-Za-z]{2,10}(?:发|發)?)?$/u,
  // "图/翻攝畫面", "圖：記者XXX攝", "图片来源：网络", "照片：X提供", "图源：X", "来源：X"
  /^(?:图|圖|图片|圖片|照片|相片|图文|圖文|图源|圖源|来源|來源|出处|出處|图片来源|圖片來源|照片来源|照片來源|图片提供|圖片提供|图片作者|圖片作者|资料来源|資料來源|图片由|圖片由)\s*(?:[：:／/|｜]|由)\s*\S.{0,40}$/u,
  // "图片来自视频截图", "图片来自网络": where the picture came from
  /^(?:图片|圖片|图|圖|照片)(?:来自|來自)\s*\S.{0,30}$/u,
  // "圖翻攝自google map", "图取自网络"
  /^(?:图|圖|照片|图片|圖片)?\s*(?:翻[摄攝]|取|截|擷取|撷取|截取)自\s*\S.{0,40}$/u,
  // "中央社記者某某桃園傳真"
  new RegExp(`^(?:${ZH_ORG}\\s*)?(?:${ZH_ROLE}\\s*)?[^。！？!?；;，,（）()]{1,16}(?:传真|傳真)$`, 'u'),
  // an agency alone, sending, or its file photo: "视觉中国", "新华社发", "路透社", "中新网", "Getty Images", "视觉中国 资料"
  new RegExp(`^${ZH_AGENCY}(?:发|發|供图|供圖|图|圖|图片|圖片|照片|\\s?(?:资料|資料)(?:图|圖|图片|圖片|照片)?)?(?:\\s*[／/]\\s*${ZH_AGENCY}){0,2}$`, 'iu'),
  // stock phrases: "资料图", "视频截图", "网络图片", "受访者供图", "示意图", "微博截图"
  /^(?:本报|本報|新华社|新華社)?(?:资料图片?|資料圖片?|资料照片?|資料照片?|档案照片?|檔案照片?|视频截图|視頻截圖|影片截圖|视频截屏|画面截图|畫面截圖|网络图片|網絡圖片|網路圖片|网络截图|網路截圖|微博截图|微博截圖|微信截图|网页截图|網頁截圖|手机截图|手機截圖|截图|截圖|示意图|示意圖|翻摄|翻攝|受访者供图|受訪者供圖|受访者提供|受訪者提供|网友供图|網友供圖|网友提供|網友提供|读者供图|讀者供圖)$/u,
  // "艾米丽·贝尔（Emily Berl）为《纽约时报》撰稿": the Chinese form of "Name for Outlet" (see EN_CREDIT_STRONG)
  /^[^。！？!?；;，,]{1,40}为《[^》]{1,24}》(?:撰稿|拍摄|拍攝|摄|攝)$/u,
  // "图：@某某微博截图" style screenshots credited with an account
  /^@\S{1,30}\s*(?:微博|微信|抖音|推特|脸书|臉書)?(?:截图|截圖)$/u,
];

const ZH_DATE = /^(?:(?:中華)?民國|民国)?\s*\d{2,4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日$/u;
const NUM_DATE = /^\d{4}\s*[-/.]\s*\d{1,2}\s*[-/.]\s*\d{1,2}$/;
const EN_DATE = new RegExp(`^(?:${WEEKDAY},?\\s+)?(?:${MONTH}\\.?\\s+\\d{1,2},?\\s+\\d{4}|\\d{1,2}\\s+${MONTH}\\.?,?\\s+\\d{4})$`, 'i');

// Leading datelines.
const EN_LEAD_DATELINES: RegExp[] = [
  // Getty: "WASHINGTON, DC - FEBRUARY 26:", "LONDON, ENGLAND - MAY 03, 2016:"
  new RegExp(`^[A-Z][A-Z .,'’-]{2,50}\\s[-–—]\\s(?:${MONTH.toUpperCase()}|${MONTH})\\.?\\s\\d{1,2}(?:,\\s\\d{4})?\\s*:\\s*`),
  // wire: "BEIJING, March 19 (Xinhua) --", "NEW YORK, March 19 (Reuters) -"
  new RegExp(`^[A-Z][A-Z .'’-]{2,40}(?:,\\s[A-Z][A-Za-z .'’-]{1,30})?,\\s(?:${MONTH}\\.?\\s\\d{1,2}|\\d{1,2}\\s${MONTH})(?:,\\s\\d{4})?\\s\\((?:${EN_AGENCY})\\)\\s*(?:--|[-–—])\\s*`),
  // wire without a date: "LONDON (Reuters) -", "WASHINGTON (AP) —" (Reuters, AP, AFP stories and their photo captions)
  new RegExp(`^[A-Z][A-Z.'’-]+(?:\\s[A-Z][A-Z.'’-]+){0,3}(?:,\\s[A-Z][A-Za-z.'’-]+(?:\\s[A-Z][A-Za-z.'’-]+)?)?\\s\\((?:${EN_AGENCY})\\)\\s*(?:--|[-–—])\\s*`),
];
const ZH_LEAD_DATELINES: RegExp[] = [
  // "新华社北京3月19日电（记者 X）", "中新网3月19日电", "（中央社記者X台北19日電）"
  /^[（(]?(?:新华社|新華社|中新社|中新网|中新網|中央社|本报|本報|人民网|人民網)[^。！？，,]{0,16}?\d{1,2}\s*日\s*(?:电|電)(?:\s*[（(][^）)]{1,30}[）)])?[）)]?\s*/u,
  // "新华社照片，北京，2016年3月19日"
  /^(?:新华社|新華社)照片\s*[，,]\s*[^，,。]{1,12}\s*[，,]\s*\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日\s*/u,
];

const OPEN = '（([【〔[「';
const CLOSE = '）)]】〕]」';
const BRACKETS = /^[（(【〔[「]\s*(.*?)\s*[）)\]】〕」]$/su;

export function collapseSpace(s: string): string {
  return s.replace(/[\s\u00a0\u200b\u3000]+/g, ' ').trim();
}

function stripBrackets(s: string): string {
  let t = s.trim();
  for (let i = 0; i < 2; i++) {
    const m = BRACKETS.exec(t);
    if (!m) break;
    // Only one bracketed group: "(a) b (c)" is not wrapped.
    const inner = m[1]!;
    if (/[（(【〔[「]/u.test(inner) && /[）)\]】〕」]/u.test(inner) && !balanced(inner)) break;
    t = inner.trim();
  }
  return t;
}

function balanced(s: string): boolean {
  let d = 0;
  for (const ch of s) {
    if (OPEN.includes(ch)) d++;
    else if (CLOSE.includes(ch)) {
      d--;
      if (d < 0) return false;
    }
  }
  return d === 0;
}

type PieceKind = 'credit' | 'dateline';

function datePiece(t: string, lang: CreditLang): boolean {
  return ZH_DATE.test(t) || NUM_DATE.test(t) || (lang === 'en' || /^[A-Za-z]/.test(t) ? EN_DATE.test(t.replace(/\.$/, '')) : false);
}

/** The kind of one piece (brackets already removed), or null. `strong`: it follows a sentence end or a bracket. */
function pieceKind(raw: string, lang: CreditLang, strong: boolean): PieceKind | null {
  const t = raw.replace(/^[\s,;:，；：|｜•·–—-]+|[\s,;，；|｜•·–—-]+$/gu, '').trim();
  if (!t || t.length > 120) return null;
  if (datePiece(t, lang)) return 'dateline';
  const en = EN_CREDIT.some((r) => r.test(t)) || (strong && EN_CREDIT_STRONG.some((r) => r.test(t)));
  if (en) return 'credit';
  if (lang === 'zh' || /\p{Script=Han}/u.test(t)) {
    if (ZH_CREDIT.some((r) => r.test(t))) return 'credit';
  }
  return null;
}

interface Piece {
  text: string;
  kind: PieceKind;
}

interface Peeled {
  rest: string;
  pieces: Piece[];
}

const SENTENCE_END = /[。！？!?；;.…」』"”’)）\]】]$/u;
// One to four capitalised words (a source's name: "Boing Boing", "Public domain", "NASA/JPL"), and the bracketed
// words that are the caption's own: where someone stands, what the photo is, a year or a time.
const BARE_NAME = /^[\p{Lu}\d][\p{L}\d.'’&/-]*(?:\s+(?:[\p{Lu}\d][\p{L}\d.'’&/-]*|domain|of|the|and|for|de|van|von|&)){0,3}$/u;
const NOT_A_NAME = /^(?:L|R|C|L-R|R-L|left|right|centre|center|front|back|top|bottom|above|below|inset|middle|pictured|file|video|photos?|pictures?|illustration|graphic|map|chart|archive|\d{1,4}s?|\d{1,2}:\d{2}|(?:\d(?:st|nd|rd|th)\s+)?(?:from\s+)?(?:L|R|left|right))$/i;

/** Peels one credit or dateline piece off the end of t, or returns null. */
function peelTail(text: string, lang: CreditLang, afterPiece: boolean): Peeled | null {
  const t = text.replace(/[\s|｜•·–—-]+$/u, '');
  const n = t.length;
  if (!n) return null;
  // 1. A bracketed group at the end: "(AP Photo/Evan Vucci)", "（消防局提供）", "（中央社記者X攝 105年3月19日）".
  const last = t[n - 1]!;
  if (CLOSE.includes(last)) {
    let depth = 0;
    let open = -1;
    for (let i = n - 1; i >= 0 && i >= n - 160; i--) {
      const ch = t[i]!;
      if (CLOSE.includes(ch)) depth++;
      else if (OPEN.includes(ch)) {
        depth--;
        if (depth === 0) {
          open = i;
          break;
        }
      }
    }
    if (open >= 0) {
      const inner = t.slice(open + 1, n - 1).trim();
      const rest = t.slice(0, open).trim();
      const pieces = inner ? innerPieces(inner, lang) : null;
      if (pieces) return { rest, pieces };
      // A name alone in brackets after the caption's last sentence: "… Portland, Oregon. (Boing Boing)".
      if (lang === 'en' && SENTENCE_END.test(rest) && BARE_NAME.test(inner) && !NOT_A_NAME.test(inner)) return { rest, pieces: [{ text: inner, kind: 'credit' }] };
    }
  }
  // 2. The text after a boundary: a sentence end, a closing bracket, a separator, or a space. The longest tail that
  // is one credit piece wins (a credit is rarely followed by caption words); at a mere space the piece must be one
  // of the patterns strict enough to stand without a sentence end before it.
  const start = Math.max(0, n - 120);
  for (let b = start; b < n; b++) {
    if (b > 0) {
      const prev = t[b - 1]!;
      // A sentence's full stop with the credit's element printed right after it ("…Calif.Leah Millis/The Chronicle":
      // two spans with no space between them) is a boundary too, after a word (not an initial such as "J.K.").
      const glued = prev === '.' && b >= 3 && /\p{Ll}{2}/u.test(t.slice(b - 3, b - 1)) && /\p{Lu}/u.test(t[b] ?? '');
      const isBoundary = /[\s。！？!?；;，,、|｜:：)）\]】」』]/u.test(prev) || (prev === '.' && /\s/.test(t[b] ?? '')) || glued;
      if (!isBoundary) continue;
    } else continue; // the whole text is not a tail of itself
    if (/\s/u.test(t[b]!)) continue;
    const piece = t.slice(b).trim();
    // credits start with a capital, a digit, a bracket or a hanzi; a stock photographer's handle before its library
    // may not ("forestpath / Depositphotos")
    if (/\p{Ll}/u.test(t[b]!) && !STOCK_TAIL.test(piece)) continue;
    if (!piece || !balanced(piece)) continue;
    const before = t.slice(0, b).trimEnd();
    const sentenceEnd = SENTENCE_END.test(before) || /[。！？!?|｜–—]$/u.test(before);
    const strong = sentenceEnd || afterPiece;
    // A comma or colon before the piece means it is still the caption's sentence ("…, Photo taken…" is rare;
    // "said Reuters" is common): only a sentence end, a bracket, a separator or a space may precede a credit.
    if (/[，,、:：]$/u.test(before) && !/(?:photo|credit|image|图|圖|来源|來源)\s*[:：]$/iu.test(before)) continue;
    const kind = pieceKind(piece, lang, strong);
    if (!kind) continue;
    // A bare date is part of the caption's sentence ("in Mumbai May 13, 2014.") unless a sentence end or a credit
    // precedes it ("…傳真 105年3月19日").
    if (kind === 'dateline' && (!sentenceEnd || /\.$/.test(piece)) && !endsWithCredit(before, lang)) continue;
    return { rest: before.replace(/[\s|｜•·–—-]+$/u, '').trim(), pieces: [{ text: piece, kind }] };
  }
  return null;
}

function endsWithCredit(t: string, lang: CreditLang): boolean {
  if (pieceKind(stripBrackets(t), lang, true) === 'credit') return true;
  const p = peelTail(t, lang, false);
  return !!p && p.pieces[p.pieces.length - 1]!.kind === 'credit';
}

function peelHead(t: string, lang: CreditLang): Peeled | null {
  for (const r of lang === 'zh' ? [...ZH_LEAD_DATELINES, ...EN_LEAD_DATELINES] : EN_LEAD_DATELINES) {
    const m = r.exec(t);
    if (m && m[0].length < t.length) {
      const piece = m[0].replace(/[\s:：,，-]+$|^[（(]|[）)]\s*$/gu, '').replace(/\s*(?:--|[-–—])$/, '').trim();
      return { rest: t.slice(m[0].length).trim(), pieces: [{ text: piece, kind: 'dateline' }] };
    }
  }
  return null;
}

function peelAll(text: string, lang: CreditLang): { caption: string; credits: string[]; datelines: string[] } {
  let t = collapseSpace(text);
  const credits: string[] = [];
  const datelines: string[] = [];
  const head = peelHead(t, lang);
  if (head) {
    datelines.push(head.pieces[0]!.text);
    t = head.rest;
  }
  let afterPiece = false;
  const tail: Piece[] = [];
  for (let i = 0; i < 6 && t; i++) {
    const p = peelTail(t, lang, afterPiece);
    if (!p) break;
    tail.unshift(...p.pieces);
    t = p.rest;
    afterPiece = true;
  }
  for (const p of tail) (p.kind === 'credit' ? credits : datelines).push(cleanPiece(p.text));
  return { caption: t, credits, datelines };
}

function cleanPiece(s: string): string {
  return stripBrackets(s).replace(/^[\s,;:，；：|｜•·–—-]+|[\s,;，；|｜•·–—-]+$/gu, '').trim();
}

/** The pieces of a bracketed group when its inner text is wholly credit/dateline ("中央社記者X攝 105年3月19日"), else null. */
function innerPieces(inner: string, lang: CreditLang): Piece[] | null {
  const t = collapseSpace(inner);
  const whole = pieceKind(t, lang, true);
  if (whole) return [{ text: t, kind: whole }];
  let rest = t;
  const out: Piece[] = [];
  for (let i = 0; i < 4; i++) {
    const p = peelTail(rest, lang, true);
    if (!p) return null;
    out.unshift(...p.pieces);
    rest = p.rest;
    if (!rest) return out;
    const k = pieceKind(rest, lang, true);
    if (k) return [{ text: rest, kind: k }, ...out];
  }
  return null;
}

/**
 * Splits a caption into the caption proper, its credit and its dateline. Credits and datelines are taken from the
 * end (several pieces: "…命喪火窟。 （消防局提供） 中央社記者某某桃園傳真 105年3月19日"), and a wire or Getty dateline from
 * the start. Text that is only a credit gives `caption: ''`.
 */
export function splitCredit(text: string, lang: CreditLang): CreditSplit {
  const t = collapseSpace(text);
  if (!t) return { caption: '' };
  if (isCreditOrDateline(t, lang)) {
    const kind = pieceKind(stripBrackets(t), lang, true);
    return kind === 'dateline' ? { caption: '', dateline: cleanPiece(t) } : { caption: '', credit: cleanPiece(t) };
  }
  const { caption, credits, datelines } = peelAll(t, lang);
  const out: CreditSplit = { caption: caption.replace(/^[\s|｜•·:：,，-]+/u, '').replace(/[\s|｜•·,，]+$/u, '').trim() };
  if (credits.length) out.credit = credits.join(' ');
  if (datelines.length) out.dateline = datelines.join(' ');
  return out;
}

const POSITIONED = new RegExp(`^${POSITION}\\s*:\\s*(.+)$`, 'iu');

function sourceName(s: string): boolean {
  return BARE_NAME.test(s) && !NOT_A_NAME.test(s);
}

/** The whole text (inner: its text without the brackets) is a source's name in brackets, or a composite's sources. */
function bracketedSource(t: string, inner: string): boolean {
  if (inner === t || !BRACKETS.test(t)) return false;
  if (sourceName(inner)) return true;
  const parts = inner.split(/\s*[,;]\s*/);
  return parts.length >= 2 && parts.every((p) => sourceName(POSITIONED.exec(p)?.[1] ?? ''));
}

/**
 * The whole fragment is a credit or a dateline (or several: "中央社記者某某桃園傳真 105年3月19日"), not caption text.
 * For sentence segmentation: such a fragment is not a sentence.
 */
export function isCreditOrDateline(fragment: string, lang: CreditLang): boolean {
  const t = collapseSpace(fragment);
  if (!t) return false;
  const inner = stripBrackets(t);
  if (!inner) return false;
  if (pieceKind(inner, lang, true) || bracketedSource(t, inner)) return true;
  if (peelHead(inner + ' x', lang)?.rest === 'x') return true; // a leading dateline alone ("BEIJING, March 19 (Xinhua) --")
  const { caption, credits, datelines } = peelAll(inner, lang);
  if (credits.length + datelines.length === 0) return false;
  return !caption || pieceKind(caption, lang, true) !== null;
}
