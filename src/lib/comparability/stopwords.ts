// Stopwords for caption text. Written here rather than taken from a list package: the lists must match our own
// tokenisation (jieba words, WordNet lemmas) and keep words that carry scene content in captions (e.g. "front",
// "top", "side"), which general lists drop; number words are handled by numbers.ts, not here.

export const EN_STOPWORDS: ReadonlySet<string> = new Set(
  `a an the and or but nor so yet if then than that this these those there here where when while whom who whose which what
   why how is are was were be been being am do does did doing done have has had having i me my mine myself we us our ours
   ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself they them their theirs
   themselves of at by for with about against between into through during before after above below to from up down in out on
   off over under again further once all any both each few more most other some such no not only own same too very s t can
   will just don should now also as get gets got getting while 's 're 've 'll 'd let lets one's something someone somebody
   anything everything nothing thing things kind sort lot lots many much several another other others various very really
   quite rather near next onto upon within without toward towards across along around behind beside besides beneath
   among amongst via per like unlike would could might must may shall ought`
    .split(/\s+/)
    .filter(Boolean),
);

/** Chinese function words, particles, pronouns, auxiliaries and bare locatives as jieba cuts them. */
export const ZH_STOPWORDS: ReadonlySet<string> = new Set(
  `的 地 得 了 着 过 在 是 有 和 与 及 或 而 也 都 就 还 又 把 被 给 让 向 从 对 为 于 以 之 其 这 那 这个 那个 这些 那些 这里 那里
   这儿 那儿 一个 一只 一位 一名 一条 一张 一辆 一些 一种 一座 一块 一片 一群 一对 一堆 一家 一艘 一架 一棵 一盘 一碗 一杯 一件
   一双 一顶 一根 一 个 只 位 名 条 张 辆 些 种 座 块 片 件 双 顶 根 他 她 它 他们 她们 它们 我 我们 你 你们 自己 某 某个 某人
   上 下 里 中 内 外 旁 边 上面 下面 里面 外面 旁边 前面 后面 正在 正 在于 着呢 呢 吗 吧 啊 呀 哦 嗯 很 非常 十分 比较 更 最
   已经 曾经 将 会 能 可以 要 想 正在 之中 之上 之下 之间 当中 一起 一边 一样 地方 东西 什么 怎么 如何 因为 所以 但是 但 并
   并且 而且 然后 同时 其中 等 等等 各种 各 每 每个 其他 别的 另 另一个 另一 所 们 啦 嘛 吧 罢了 来 去 到 用 由 离 跟 同 及其`
    .split(/\s+/)
    .filter(Boolean),
);

export const isPunctOrSpace = (s: string): boolean => /^[\s\p{P}\p{S}]*$/u.test(s);
