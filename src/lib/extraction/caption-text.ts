// Caption text cleaning: whitespace, hidden screen-reader prefixes, slide counters and "hide caption" toggles, then
// the credit and dateline split off by the shared recogniser (src/lib/captions/credit.ts). Texts that are only a credit
// (or a copyright notice) are recognised so they are not pairs.
import { collapseSpace, isCreditOrDateline, splitCredit, type CreditLang } from '../captions/index.js';

export interface CleanCaption {
  caption: string;
  credit?: string;
  dateline?: string;
}

// Interface text around captions: screen-reader prefixes (BBC "Image caption,", NPR "toggle caption"), slide
// counters ("3 of 12"), markers Taiwanese and mainland papers put before a caption ("▲", "图注：").
const PREFIXES = [
  /^(图像加注文字|圖像加註文字|图片说明|圖片說明)\s*[，,:：]\s*/,
  /^(image caption|caption|photo caption|media caption|imagecaption|enlarge this image|toggle caption|hide caption|show caption|expand)\s*[:：,]?\s*/i,
  /^(图注|圖註|图说|圖說)\s*[:：]\s*/,
  /^[▲▼△▽↑↓◆■●☆★]+\s*/,
  // "Photo 3 of 12", "Slide: 1 / of 2 ." (a counter printed before a slide's caption, or alone before its credit)
  /^(image|photo|slide|picture|图|圖)\s*[:：]?\s*\d+\s*(of|\/|／)\s*(of\s*)?\d+\s*[:：.]?\s*/i,
  /^\d+\s*(of|\/|／)\s*\d+\s+/i,
  /^(previous|next)\s+(image|slide)\s*/i,
  // a sharing bar printed before a gallery slide's caption (WordPress's "Comment Click to share on Facebook (Opens in
  // new window) …", on 9 sites of the open and dev pages)
  /^(comments?\s+)?((click to share on|share on)\s+[\w+-]+(\s*\(opens in (a )?new (window|tab)\))?\s*)+/i,
];
const SUFFIXES = [/\s*(hide|toggle|show) caption\s*$/i, /\s*\d+\s*(of|\/)\s*\d+\s*$/i, /\s*(expand|enlarge|close)\s*$/i, /\s*Advertisement\s*$/i, /\s*more\s*[>›»]\s*$/i, /\s*(view full size|view larger image|view larger)\s*[>›»]?\s*$/i];

// Not credits in the agency sense, but not captions either: copyright notices ("东方IC 版权作品 请勿转载") and a
// celebrity agency's code name alone ("AKM-GSI").
const NOT_CAPTION: RegExp[] = [
  /^(?=.{0,40}$).*(?:版权作品|版權作品|请勿转载|請勿轉載|版权所有|版權所有|未经授权|未經授權|禁止转载|禁止轉載|all rights reserved)/iu,
  /^(?:©|\([cC]\)(?=\s|$)).{0,60}$/u,
  // a picture's kind alone, no caption: "Screenshot", "(YouTube screenshot)", "Screen grab", "Video still"
  /^\(?(?:[\p{Lu}][\p{L}.]*\s+){0,2}(?:screen ?shot|screen ?grab|screen capture|(?:video|film|movie|tv) still)\)?$/iu,
  /^[A-Z]{2,6}-[A-Z]{2,6}$/,
  // a shopping section's affiliate disclosure under its lead photo ("X is reader-supported and may earn an affiliate
  // commission"): a legal notice, never what the photo shows
  /^(?=.{0,200}$).*(?:\b(?:may|might|could) earn (?:an? )?(?:small )?(?:affiliate )?commission|\breader-supported\b)/iu,
];

// A date or a time stamp alone: what is left of an article's date-and-byline line ("2015-05-13 16:37:41 UTC | By
// Name") once the byline is read as a credit. No caption, and no credit either.
const DATE_ONLY = /^((published|updated|posted|发布时间|發布時間|更新时间|更新時間)\s*[:：]?\s*)?\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}\s*日?(\s*[T ]?\s*\d{1,2}:\d{2}(:\d{2})?)?\s*([A-Z]{2,4}|[+-]\d{2}:?\d{2})?(\s*[|·•]?\s*by\s+[^|]{2,60})?$/iu;

// The same stamp written out, behind its label: "Updated: 6:29 PM CST Dec 5, 2023", "Published Dec. 5, 2023 at 3:00 p.m.
// ET", "Last updated 2 hours ago" (a Hearst TV site gave its logo the first as a caption): after the label, only
// numbers, times, month and day names, am/pm, a time zone and "at", "on", "ago" with its units.
const STAMP_LABEL = /^(?:last\s+)?(?:published|updated|posted|modified)(?:\s+on)?\s*[:：]?\s*/i;
const STAMP_WORD =
  /^(?:\d{1,4}(?:st|nd|rd|th)?|\d{1,2}:\d{2}(?::\d{2})?|[ap]\.?m\.?|[A-Z]{2,4}|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?|at|on|ago|seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?)$/;

/** A publish or update stamp alone (STAMP_LABEL, then STAMP_WORDs and at least one number). */
function stampOnly(t: string): boolean {
  const m = STAMP_LABEL.exec(t);
  if (!m || !/\d/.test(t)) return false;
  const words = t.slice(m[0].length).replace(/\b([ap])\.m\./gi, '$1m').split(/[\s,./|·•-]+/).filter(Boolean);
  return words.length > 0 && words.every((w) => STAMP_WORD.test(w) || STAMP_WORD.test(w.toLowerCase()));
}

export function collapse(s: string): string {
  return collapseSpace(s);
}

function langOf(t: string): CreditLang {
  return /\p{Script=Han}/u.test(t) ? 'zh' : 'en';
}

/**
 * The answers of cleanCaption and isCreditOnly while one page is worked on, each text worked out once: candidate
 * generation and the features ask about the same few hundred texts several times per photo (a photo's features look at
 * each of its other candidates), and the credit recogniser's patterns are most of the cost of asking (en-techradar-01 of
 * holdout-coord-b: 640 questions about 260 texts). Both are functions of their arguments alone; the memo lives only
 * for the call of withCaptionMemo (pageCandidates: one page), so nothing is kept from one page to the next.
 */
interface Memo {
  cleaned: Map<string, CleanCaption | null>;
  creditOnly: Map<string, boolean>;
}
let memo: Memo | null = null;

export function withCaptionMemo<T>(work: () => T): T {
  if (memo) return work();
  memo = { cleaned: new Map(), creditOnly: new Map() };
  try {
    return work();
  } finally {
    memo = null;
  }
}

/** The text is only a credit, a dateline or a copyright notice. */
export function isCreditOnly(text: string, lang?: CreditLang): boolean {
  if (!memo) return creditOnly(text, lang);
  const key = `${lang ?? ''}|${text}`;
  let v = memo.creditOnly.get(key);
  if (v === undefined) memo.creditOnly.set(key, (v = creditOnly(text, lang)));
  return v;
}

function creditOnly(text: string, lang?: CreditLang): boolean {
  const t = collapse(text);
  if (!t) return true;
  return isCreditOrDateline(t, lang ?? langOf(t)) || NOT_CAPTION.some((r) => r.test(t));
}

function stripInterface(raw: string): string {
  let t = collapse(raw);
  for (let i = 0; i < 3; i++) {
    const before = t;
    for (const p of PREFIXES) t = t.replace(p, '');
    for (const s of SUFFIXES) t = t.replace(s, '');
    t = t.trim();
    if (t === before) break;
  }
  return t;
}

/**
 * The caption a reader sees, its credit and dateline; null when nothing but a credit is left. An explicit credit
 * (from a credit element or attribute) is taken as given and removed from the end of the text when repeated there.
 */
export function cleanCaption(raw: string, explicitCredit?: string | null, lang?: CreditLang): CleanCaption | null {
  if (!memo) return clean(raw, explicitCredit, lang);
  const credit = explicitCredit || '';
  const key = `${lang ?? ''}|${credit.length}|${credit}${raw}`;
  let v = memo.cleaned.get(key);
  if (v === undefined) memo.cleaned.set(key, (v = clean(raw, explicitCredit, lang)));
  return v && { ...v };
}

function clean(raw: string, explicitCredit?: string | null, lang?: CreditLang): CleanCaption | null {
  let t = stripInterface(raw);
  const l = lang ?? langOf(t);
  let credit = explicitCredit ? collapse(explicitCredit) : undefined;
  if (credit && t.endsWith(credit)) t = t.slice(0, -credit.length).trim();
  const split = splitCredit(t, l);
  t = split.caption.replace(/^[\s|•·:：,，-]+/u, '').replace(/[\s|•·,，]+$/u, '').trim();
  if (split.credit) credit = credit ? `${split.credit} ${credit}` : split.credit;
  if (!t || isCreditOnly(t, l) || DATE_ONLY.test(t) || DATE_ONLY.test(collapse(raw)) || stampOnly(t)) return null;
  const out: CleanCaption = { caption: t };
  if (credit) out.credit = credit;
  if (split.dateline) out.dateline = split.dateline;
  return out;
}
