// Caption text cleaning: whitespace, hidden screen-reader prefixes, slide counters, "hide caption" toggles, and
// the trailing credit split off into its own field. Credit-only texts are recognised so they are not pairs.

export interface CleanCaption {
  caption: string;
  credit?: string;
}

const PREFIXES = [
  /^(图像加注文字|圖像加註文字|图片说明|圖片說明|图片来源|圖片來源)\s*[，,:：]\s*/,
  /^(image caption|caption|photo caption|media caption|imagecaption|enlarge this image|toggle caption|hide caption|show caption|expand)\s*[:：,]?\s*/i,
  /^(图注|圖註|图说|圖說)\s*[:：]\s*/,
  /^[▲▼△▽↑↓◆■●☆★]+\s*/,
  // Agency datelines: "WASHINGTON - FEBRUARY 26: ...", "LONDON, ENGLAND - MAY 3: ..."
  /^[A-Z][A-Z .,'-]{2,40}\s[-–—]\s(?:JANUARY|FEBRUARY|MARCH|APRIL|MAY|JUNE|JULY|AUGUST|SEPTEMBER|OCTOBER|NOVEMBER|DECEMBER)\s\d{1,2}(?:,\s\d{4})?:\s*/,
  /^(image|photo|slide|picture|图|圖)\s*\d+\s*(of|\/|／)\s*\d+\s*[:：.]?\s*/i,
  /^\d+\s*(of|\/|／)\s*\d+\s+/i,
  /^(previous|next)\s+(image|slide)\s*/i,
];
const SUFFIXES = [/\s*(hide|toggle|show) caption\s*$/i, /\s*\d+\s*(of|\/)\s*\d+\s*$/i, /\s*(expand|enlarge|close)\s*$/i, /\s*Advertisement\s*$/i, /\s*more\s*[>›»]\s*$/i, /\s*(view full size|view larger image|view larger)\s*[>›»]?\s*$/i];

// Trailing credits. Each regex captures the credit in group 1 (the whole match is removed from the caption).
const EN_CREDIT_TRAILING: RegExp[] = [
  /\s*(?:Credit){1,2}\.\.\.\s*(.{2,90})$/,
  /[\s;,|–—-]*\(?((?:photo(?:graph)?s?|image|picture|credit|photo credit|illustration|video|source)\s*(?:by|:|courtesy(?: of)?)\s*[^()]{2,90}?)\)?\s*$/i,
  /[\s;,|–—-]*\(((?:xinhua|reuters|ap|afp|epa|getty|ani|pti|ians|efe|dpa|anadolu|upi|kyodo|yonhap|bloomberg|ap photo|reuters photo)(?:\s*\/\s*[^()]{1,70}|\s+photo[^()]{0,60})?)\)\s*$/i,
  /[\s;,|–—-]*((?:[A-Z][\p{L}.'-]+\s){1,3}[A-Z][\p{L}.'-]+\s*\/\s*(?:AP|AFP|Reuters|Getty Images|EPA|Bloomberg|The [A-Z][\w ]+|[A-Z][\w&.-]+(?:\s(?:Images|Photo|Press|News))?)(?:\s*(?:Photo|via|\/)[\w\s/.-]{0,40})?)\s*$/u,
  /[\s;,|–—-]*((?:AP|AFP|Reuters|Getty Images|EPA|Bloomberg|PA|Shutterstock|iStock)(?:\s*\/\s*[\w\s.'-]{1,40})?)\s*$/,
];
const ZH_CREDIT_TRAILING: RegExp[] = [
  /[\s（(。，,]*((?:新华社|新華社|中新社|中新网|人民网|人民網|中央社|央视|本报|本報)?(?:记者|記者|通讯员|通訊員)?\s*[\p{Script=Han}A-Za-z·\s、]{1,20}\s*(?:摄|攝|供图|供圖|制图|製圖|拍摄|攝影|摄影))[\s）)]*$/u,
  /[\s（(。，,]*((?:图|圖|图片|圖片|图源|圖源|来源|來源|图片来源|圖片來源|资料图|資料圖|视频截图|視頻截圖)\s*[：:／/]\s*[^\s（）()]{1,30})[\s）)]*$/u,
  /[（(]((?:资料图|資料圖|视频截图|視頻截圖|网络图片|網絡圖片|受访者供图|受訪者供圖)[^（）()]{0,12})[）)]\s*$/u,
];
// A Chinese caption whose last sentence is a credit: "说明。X供图 某网" / "说明。中央社記者X攝 112年2月16日".
const ZH_TAIL_CREDIT = /(?<!拍)[摄攝](?![影像])|供[图圖]|[图圖]\s*[／/:：]|来源|來源|资料图|資料圖|截[图圖]/u;

const CREDIT_ONLY: RegExp[] = [
  /^\(?(?:photo(?:graph)?s?|image|picture|credit|photo credit|illustration|source|file photo)\s*(?:by\b|:|：|courtesy\b|\/).{0,80}$/i,
  /^\(?(?:credit|source)\s+.{0,60}$/i,
  /^(?:[\p{L}.'-]+\s){0,4}[\p{L}.'-]+\s*\/\s*(?:AP|AFP|Reuters|Getty Images|EPA|Bloomberg|Xinhua|Shutterstock|Getty)\b.{0,40}$/iu,
  /^(?:AP|AFP|Reuters|Getty Images|Getty|EPA|Bloomberg|Xinhua|Shutterstock|iStock|PA|AKM-GSI|USATSI|Handout)(?:\s*(?:photo|images?|\/.*))?$/i,
  /^courtesy\b.*$/i,
  /^\([^()]{1,40}\)$/,
  /^[（(]?(?:图|圖|图片|圖片|图源|来源|來源|图片来源|圖片來源)\s*[：:／/].{0,40}$/u,
  /^[（(]?(?:新华社|新華社|中新社|中央社)?(?:记者|記者)?\s*[\p{Script=Han}A-Za-z·\s]{1,16}\s*(?:摄|攝|供图|供圖)[）)]?$/u,
  /^[（(]?(?:资料图|資料圖|视频截图|網絡圖片|网络图片)[^\p{Script=Han}]{0,4}[）)]?$/u,
  // A photo agency's name alone, or a copyright notice ("东方IC 版权作品 请勿转载"): a credit, not a caption.
  /^[（(]?(?:视觉中国|視覺中國|东方IC|東方IC|图虫创意|圖蟲創意|全景网|全景網|IC ?photo|CFP|新华社|新華社|中新社|中新网|中新網|人民视觉|人民視覺|中央社|路透社?|美联社|美聯社|法新社|欧新社|歐新社|视觉中国供图|Getty ?Images|VCG)[）)]?(?:\s*(?:供图|供圖|图|圖))?$/iu,
  /^(?=.{0,40}$).*(?:版权作品|版權作品|请勿转载|請勿轉載|版权所有|版權所有|未经授权|未經授權|禁止转载|禁止轉載)/u,
  // English credits written as a slash list of names or organisations: "Bheki/ Informal Traders/ City of Johannesburg".
  /^(?:[\p{Lu}][\p{L}.'&-]*(?:\s+(?:of|the|and|for|&|[\p{Lu}][\p{L}.'&-]*)){0,4}\s*\/\s*){1,4}[\p{Lu}][\p{L}.'&-]*(?:\s+(?:of|the|and|for|&|[\p{Lu}][\p{L}.'&-]*)){0,4}$/u,
];

export function collapse(s: string): string {
  return s.replace(/[\s\u00a0\u200b\u3000]+/g, ' ').trim();
}

export function isCreditOnly(text: string): boolean {
  const t = collapse(text);
  if (!t) return true;
  return CREDIT_ONLY.some((r) => r.test(t));
}

export function cleanCaption(raw: string, explicitCredit?: string | null): CleanCaption | null {
  let t = collapse(raw);
  for (let i = 0; i < 3; i++) {
    const before = t;
    for (const p of PREFIXES) t = t.replace(p, '');
    for (const s of SUFFIXES) t = t.replace(s, '');
    t = t.trim();
    if (t === before) break;
  }
  let credit = explicitCredit ? collapse(explicitCredit) : undefined;
  if (credit && t.endsWith(credit)) t = t.slice(0, -credit.length).trim();
  if (!credit) {
    const zh = /\p{Script=Han}/u.test(t);
    const stop = Math.max(t.lastIndexOf('。'), t.lastIndexOf('！'));
    if (zh && stop > 0 && stop < t.length - 1) {
      const tail = t.slice(stop + 1).trim();
      if ([...tail].length <= 40 && ZH_TAIL_CREDIT.test(tail)) {
        credit = collapse(tail.replace(/^[（(]|[）)]$/g, ''));
        t = t.slice(0, stop + 1);
      }
    }
  }
  if (!credit) {
    const zh = /\p{Script=Han}/u.test(t);
    for (const r of zh ? [...ZH_CREDIT_TRAILING, ...EN_CREDIT_TRAILING] : EN_CREDIT_TRAILING) {
      const m = r.exec(t);
      if (m && m.index > 0) {
        const rest = t.slice(0, m.index).trim();
        if (rest.length >= 2) {
          credit = collapse(m[1]!);
          t = rest;
          break;
        }
      }
    }
  }
  t = t.replace(/^[\s|•·:：,，-]+/, '').replace(/[\s|•·,，]+$/, '').trim();
  if (!t || isCreditOnly(t)) return null;
  return credit ? { caption: t, credit } : { caption: t };
}
