// Numbers, dates and times on both sides, normalised to one canonical key so that 5月5日 ↔ May 5,
// 53 ↔ fifty-three ↔ 五十三, 2016年 ↔ 2016, 三 ↔ three ↔ 3. Each finder returns the entities it saw and the
// text with those spans blanked, so the word tokenisers do not see them twice.

export type NumberKind = 'number' | 'year' | 'date' | 'month' | 'time';

export interface NumEntity {
  kind: NumberKind;
  /** Canonical key shared by both languages, e.g. "number:53", "date:5-5", "time:15:30", "year:2016". */
  key: string;
  text: string;
}

export interface NumScan {
  entities: NumEntity[];
  rest: string;
}

const blank = (s: string): string => ' '.repeat(s.length);

/**
 * The scan both languages share: each pattern's matches become entities (those with a key) and are blanked out
 * of the remaining text, so a later, looser pattern cannot read the same digits again.
 */
function numberScanner(text: string) {
  const entities: NumEntity[] = [];
  let rest = text;
  return {
    take(re: RegExp, fn: (m: RegExpExecArray) => NumEntity | null): void {
      rest = rest.replace(re, (...args) => {
        const m = args.slice(0, -2) as unknown as RegExpExecArray;
        const e = fn(m);
        if (!e) return m[0];
        if (e.key) entities.push(e);
        return blank(m[0]);
      });
    },
    blankOut(re: RegExp): void {
      rest = rest.replace(re, (m) => blank(m));
    },
    result: (): NumScan => ({ entities, rest }),
  };
}

function numberEntity(n: number, text: string): NumEntity | null {
  if (!Number.isFinite(n)) return null;
  // "one"/"一" is mostly an article in captions ("a man" / 一个男人): it is not an entity.
  if (n === 1 || n === 0) return null;
  if (Number.isInteger(n) && n >= 1000 && n <= 2100 && /^\d{4}$/.test(text.trim())) return { kind: 'year', key: `year:${n}`, text };
  return { kind: 'number', key: `number:${n}`, text };
}

// ---------------------------------------------------------------------------------------------- English
const EN_UNITS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
};
const EN_TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const EN_SCALES: Record<string, number> = { hundred: 100, thousand: 1000, million: 1e6, billion: 1e9 };
const EN_NUMWORD = [...Object.keys(EN_UNITS), ...Object.keys(EN_TENS), ...Object.keys(EN_SCALES), 'dozen'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_ABBR: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12 };
function monthOf(word: string): number | null {
  const w = word.toLowerCase().replace(/\.$/, '');
  const i = MONTHS.indexOf(w);
  if (i >= 0) return i + 1;
  return MONTH_ABBR[w] ?? null;
}

/** Parses "fifty-three", "one hundred and five", "twenty one", "a dozen" (already lower-cased, split on spaces/hyphens). */
export function parseEnglishNumberWords(words: string[]): number | null {
  let total = 0;
  let current = 0;
  let seen = false;
  for (const w of words) {
    if (w === 'and' && seen) continue;
    if (w in EN_UNITS) current += EN_UNITS[w]!;
    else if (w in EN_TENS) current += EN_TENS[w]!;
    else if (w === 'dozen') current = (current || 1) * 12;
    else if (w in EN_SCALES) {
      const s = EN_SCALES[w]!;
      if (s === 100) current = (current || 1) * 100;
      else {
        total += (current || 1) * s;
        current = 0;
      }
    } else return null;
    seen = true;
  }
  return seen ? total + current : null;
}

const RE_EN_TIME = /\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?|o'clock)(?![a-z])|\b(\d{1,2}):(\d{2})\b/gi;
const MONTH_RE = `(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\\.?`;
const RE_EN_DATE_MD = new RegExp(`\\b(${MONTH_RE})\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b`, 'g');
const RE_EN_DATE_DM = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?(${MONTH_RE})(?![a-z])`, 'g');
const RE_EN_MONTH = /\b(January|February|March|April|June|July|August|September|October|November|December)\b/g;
const RE_EN_DIGITS = /(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])/g;
const RE_EN_WORDS = new RegExp(`\\b(?:${EN_NUMWORD.join('|')})(?:(?:[\\s-]+(?:and[\\s-]+)?)(?:${EN_NUMWORD.join('|')}))*\\b`, 'gi');

function hour24(h: number, suffix: string | undefined): number {
  const s = (suffix ?? '').toLowerCase().replace(/\./g, '');
  if (s === 'pm' && h < 12) return h + 12;
  if (s === 'am' && h === 12) return 0;
  return h;
}
const timeKey = (h: number, m: number): string => (m ? `time:${h}:${String(m).padStart(2, '0')}` : `time:${h}`);

const RE_EN_ANY_NUM = new RegExp(`\\d|\\b(?:${EN_NUMWORD.join('|')}|${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)`, 'i');

export function scanEnglishNumbers(text: string): NumScan {
  if (!RE_EN_ANY_NUM.test(text)) return { entities: [], rest: text };
  const scan = numberScanner(text);
  const take = scan.take;
  take(RE_EN_TIME, (m) => {
    if (m[4] !== undefined) {
      const h = Number(m[4]);
      const mi = Number(m[5]);
      return h < 24 && mi < 60 ? { kind: 'time', key: timeKey(h, mi), text: m[0] } : null;
    }
    const h = Number(m[1]);
    if (h > 24) return null;
    return { kind: 'time', key: timeKey(hour24(h, m[3]), Number(m[2] ?? 0)), text: m[0] };
  });
  take(RE_EN_DATE_MD, (m) => {
    const mo = monthOf(m[1]!);
    const d = Number(m[2]);
    return mo && d >= 1 && d <= 31 ? { kind: 'date', key: `date:${mo}-${d}`, text: m[0] } : null;
  });
  take(RE_EN_DATE_DM, (m) => {
    const mo = monthOf(m[2]!);
    const d = Number(m[1]);
    return mo && d >= 1 && d <= 31 ? { kind: 'date', key: `date:${mo}-${d}`, text: m[0] } : null;
  });
  take(RE_EN_MONTH, (m) => ({ kind: 'month', key: `month:${monthOf(m[1]!)}`, text: m[0] }));
  take(RE_EN_DIGITS, (m) => numberEntity(Number(m[1]!.replace(/,/g, '')), m[1]!) ?? { kind: 'number', key: '', text: m[0] });
  take(RE_EN_WORDS, (m) => {
    const n = parseEnglishNumberWords(m[0].toLowerCase().split(/[\s-]+/));
    return n === null ? null : (numberEntity(n, m[0]) ?? { kind: 'number', key: '', text: m[0] });
  });
  return scan.result();
}

// ---------------------------------------------------------------------------------------------- Chinese
const ZH_DIGIT: Record<string, number> = { 零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };
const ZH_SMALL_UNIT: Record<string, number> = { 十: 10, 百: 100, 千: 1000 };
const ZH_BIG_UNIT: Record<string, number> = { 万: 1e4, 亿: 1e8 };

/** Parses a Chinese numeral (五十三, 两千零一十六, 一九八四 digit by digit) or Arabic digits; null if not a number. */
export function parseChineseNumber(s: string): number | null {
  if (/^\d+(?:\.\d+)?$/.test(s)) return Number(s);
  if (!s || /[^零〇一二两三四五六七八九十百千万亿]/.test(s)) return null;
  // Digit-by-digit years: 二〇一六, 一九八四.
  if (s.length >= 3 && /^[零〇一二三四五六七八九]+$/.test(s)) return Number([...s].map((c) => ZH_DIGIT[c]).join(''));
  let total = 0;
  let section = 0;
  let digit = 0;
  for (const c of s) {
    if (c in ZH_DIGIT) digit = ZH_DIGIT[c]!;
    else if (c in ZH_SMALL_UNIT) {
      section += (digit || 1) * ZH_SMALL_UNIT[c]!;
      digit = 0;
    } else if (c in ZH_BIG_UNIT) {
      total += (section + digit) * ZH_BIG_UNIT[c]!;
      section = 0;
      digit = 0;
    }
  }
  return total + section + digit;
}

const CN_NUM = '[0-9０-９]+|[零〇一二两三四五六七八九十百千万亿]+';
/** Grammatical classifiers: blanked with the numeral before them ("一个人" → "人"). */
const CLASSIFIERS =
  '个|只|位|名|条|张|辆|座|块|片|件|双|顶|根|头|匹|架|艘|棵|本|支|把|台|部|栋|间|家|朵|颗|粒|幅|份|道|所|枚|串|节|列|面|扇|口|岁|次|号';
/** Classifiers that carry content ("一群人" a group, "一碗汤" a bowl): only the numeral is blanked. */
const CONTENT_CLASSIFIERS = '群|对|堆|盘|碗|杯|瓶|箱|包|袋|排|队|层|束|人|多';
const RE_ZH_YEAR = new RegExp(`([0-9０-９]{4}|[零〇一二三四五六七八九]{4})年`, 'g');
const RE_ZH_DATE = new RegExp(`(${CN_NUM})月(?:(${CN_NUM})[日号])?`, 'g');
const RE_ZH_TIME = new RegExp(`(上午|早上|凌晨|中午|下午|晚上|傍晚)?(${CN_NUM})[点點时](?:(半)|(${CN_NUM})分)?`, 'g');
const RE_ZH_COUNT = new RegExp(`(${CN_NUM})(?:(${CLASSIFIERS})|(?=${CONTENT_CLASSIFIERS}))`, 'g');
const RE_ZH_VAGUE = new RegExp(`[几每某](?:${CLASSIFIERS})`, 'g');
const RE_ZH_DIGITS = /([0-9０-９]+(?:\.[0-9]+)?)/g;

const toAscii = (s: string): string => s.replace(/[０-９]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0));

const RE_ZH_ANY_NUM = /[0-9０-９零〇一二两三四五六七八九十百千万亿]/;

export function scanChineseNumbers(text: string): NumScan {
  if (!RE_ZH_ANY_NUM.test(text)) return { entities: [], rest: text };
  const scan = numberScanner(text);
  const take = scan.take;
  take(RE_ZH_YEAR, (m) => {
    const y = parseChineseNumber(toAscii(m[1]!));
    return y === null ? null : { kind: 'year', key: `year:${y}`, text: m[0] };
  });
  take(RE_ZH_DATE, (m) => {
    const mo = parseChineseNumber(toAscii(m[1]!));
    if (mo === null || mo < 1 || mo > 12) return null;
    if (m[2] === undefined) return { kind: 'month', key: `month:${mo}`, text: m[0] };
    const d = parseChineseNumber(toAscii(m[2]));
    return d !== null && d >= 1 && d <= 31 ? { kind: 'date', key: `date:${mo}-${d}`, text: m[0] } : null;
  });
  take(RE_ZH_TIME, (m) => {
    let h = parseChineseNumber(toAscii(m[2]!));
    if (h === null || h > 24) return null;
    // 一点 / 两点 alone are "a little" / "a bit" far more often than a time of day.
    if (!m[1] && !m[3] && !m[4] && !/[0-9０-９]/.test(m[2]!) && h <= 2) return null;
    if (m[1] && /下午|晚上|傍晚/.test(m[1]) && h < 12) h += 12;
    const mi = m[3] ? 30 : m[4] ? parseChineseNumber(toAscii(m[4])) ?? 0 : 0;
    return { kind: 'time', key: timeKey(h, mi), text: m[0] };
  });
  take(RE_ZH_COUNT, (m) => {
    const n = parseChineseNumber(toAscii(m[1]!));
    return n === null ? null : (numberEntity(n, m[1]!) ?? { kind: 'number', key: '', text: m[0] });
  });
  // 几个 / 一些 style counts without a number: the classifier alone is not content.
  scan.blankOut(RE_ZH_VAGUE);
  take(RE_ZH_DIGITS, (m) => {
    const n = Number(toAscii(m[1]!));
    return numberEntity(n, toAscii(m[1]!)) ?? { kind: 'number', key: '', text: m[0] };
  });
  return scan.result();
}
