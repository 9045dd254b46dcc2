// The extractor's parse (src/lib/extraction/parse.ts: parse5 reading raw text in runs) builds the tree cheerio.load
// builds, node for node, on pages written to reach every edge of the runs: script escapes, end tags that are not one,
// CR/LF, NUL, surrogate pairs, foreign content, raw text past parse5's 64 KB buffer drop (escaped script text too), a
// script left open at the end.
import { expect } from 'chai';
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { parseDocument } from '../src/lib/extraction/parse.js';

/** Every node, depth-first: type, name, attributes and namespaces, text; the counts of children. */
function shape(root: AnyNode): string[] {
  const out: string[] = [];
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    const e = n as Element & { data?: string; namespace?: string; 'x-attribsNamespace'?: unknown };
    out.push(JSON.stringify([n.type, e.name, e.attribs, e.namespace, e['x-attribsNamespace'], e.data, e.children?.length]));
    if (e.children) stack.push(...e.children);
  }
  return out;
}

const same = (html: string) => {
  const want = shape(cheerio.load(html).root()[0]!);
  expect(shape(parseDocument(html).root()[0]!)).to.deep.equal(want);
  expect(shape(parseDocument(html, false).root()[0]!)).to.deep.equal(want);
};

const js = (n: number) => Array.from({ length: n }, (_, i) => `var a${i} = {"caption": "Photo ${i} & more", "url": "/img/${i}.jpg"};  if (a${i} < 3 && b > 2) { x = '<' + 'div>'; }`).join('\n');
const css = (n: number) => Array.from({ length: n }, (_, i) => `.c${i} > a:hover { color: #${(i % 999).toString().padStart(3, '0')}; content: "</sty" "le" }`).join('\r\n');

describe('extraction parse: the tree is cheerio.load\'s', () => {
  it('script and style text, with near end tags, escapes and entities left as written', () => {
    same(`<!doctype html><html><head><title>A &amp; B</title><style>${css(40)}</style><script>${js(40)}</script></head><body><p>x</p></body></html>`);
    same(`<html><body><script>document.write("<!--<script>x()</script>-->"); var y = "</scrip" + "t>";</script ><p>after</p><STYLE type=text/css>p{a:b}</STYLE ><p>end</p></body></html>`);
    same(`<body><script>a = 1; <!-- b = "<script>"; c = "</script>"; d = 2 --> e = 3</script><p>z</p><script>if (a<b) {}</script/><p>q</p></body>`);
  });

  it('line ends (CR, CRLF), NUL and astral characters inside raw text', () => {
    same(`<body><script>a = 1;\r\nb = 2;\rc = "\u0000";\n\n d = "😀 emoji 漢字 \ud800 lone";</script><style>\r\n p { x: "\u0000" }\r\n</style><p>t\r\n</p></body>`);
  });

  it('other raw-text elements, RCDATA and foreign content', () => {
    same(`<body><pre>\n<script>\nx = 1</script></pre><textarea>\n<b>not a tag</b> &amp;</textarea><xmp><b>raw</b></xmp><iframe><p>in iframe</p></iframe><noembed>a<b</noembed><noframes>c</noframes><noscript><img src="/a.jpg"> text</noscript>
      <svg><style>.a{fill:red}</style><script>var s = "<g>";</script><g><text>svg text</text></g></svg><math><mi>x</mi></math><table><script>t = 1 < 2</script><tr><td>cell</td></tr></table><select><script>s = 3</script><option>o</option></select></body>`);
  });

  it('attribute values: quotes of the other kind, character references (named, numeric, ambiguous, unknown), line ends, NUL', () => {
    same(`<body><img src="/a.jpg?w=1&amp;h=2&h=3&copy=4&notanentity;x" alt='He said "hi" &amp; left' data-x="a\r\nb\nc\u0000d 😀" title='it&#39;s &#x41; &gt' srcset="/a.jpg 1x, /b.jpg 2x"><a href="?a=1&b=2&lang=en" data-caption='<b>bold</b> caption'>l</a>
      <svg><path d="M0 0 L10 10 Z" fill="url(#g)"/></svg><p class="${'c '.repeat(40000)}">big</p><img src="/unterminated.jpg alt="x"></body>`);
    same(`<body><img alt="${'long value '.repeat(9000)}&amp;" src='/x.jpg'><p>after</p></body>`);
    same(`<body><img alt="open to the end of the page &amp; beyond`);
  });

  it('raw text longer than parse5\'s 64 KB buffer, and a script left open at the end of the page', () => {
    same(`<html><head><script>${js(2000)}</script><style>${css(2000)}</style></head><body><p>${'word '.repeat(20000)}</p><script>${js(1500)}</script><p>last</p></body></html>`);
    same(`<html><body><script>var s = "<!-- ${js(1500)} --> -- - <!-- <script> ${js(1500)} </script> - -- ${js(50)} -->";</script><p>escaped</p><script><!--<script>${js(1500)}</script>--></script><p>after</p></body></html>`);
    same(`<body><script>a = "<!--"; ${js(20)} b = "-->"; c = "<script>"; ${js(20)}</script><p>after the escape</p><script>d = 1</script><p>end</p></body>`);
    same(`<html><body><p>x</p><script>${js(300)}`);
    same(`<html><body><p>x</p><script><!-- ${js(300)}`);
    same(`<html><body><p>x</p><style>${css(300)}`);
  });
});
