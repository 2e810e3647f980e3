import FoundationEssentials
import MapGateBase

/// An answer typed at the update prompt ("update now or later?"), read the same in every
/// language mapgate speaks, whatever the locale: the option keys and numbers (`u`/`l`, `1`/`2`),
/// the labels each language's prompt shows (立即更新 / 稍後更新, 今すぐアップデート / 後で,
/// 지금 업데이트 / 나중에), and yes and no, since the question is a yes/no question in every
/// language (是 / 否, はい / いいえ, 예 / 아니요, y / n). An answer is folded first
/// (``folded(_:)``): what a CJK input method types in full-width mode (`ｕ`, `１`, `ＹＥＳ`) reads
/// as its ASCII letter, and case does not matter.
///
/// Anything else is not understood: the prompt asks again, saying what the choices are, and after
/// ``attempts`` unclear answers (or at the end of input) the command does not run and no use is
/// counted. An answer that is not understood is never taken as either choice.
public enum PromptAnswer: Sendable, Equatable {
    /// Open the store; the command does not run (and its use is given back).
    case updateNow
    /// Run the command.
    case later

    /// How many answers the prompt asks for before it gives up.
    public static let attempts = 3

    /// Seconds the prompt waits for each answer before it takes the silence for no answer (the
    /// command does not run, no use is counted): the use is held while the question is open.
    public static let timeout: Double = 600

    /// The answer `text` means, or nil when it is not understood.
    public init?(_ text: String) {
        let answer = Self.folded(text)
        if let meaning = Self.meaning(of: answer) {
            self = meaning
            return
        }
        // Several words that all say the same (`아니요 나중에`, `いいえ、後で`, `no, later`; found
        // by an attack: a whole natural answer was asked again); words that disagree are not
        // understood.
        let parts = answer.split(whereSeparator: { " ,、，;；/".contains($0) }).map(String.init)
        guard parts.count > 1, let first = Self.meaning(of: parts[0]), parts.allSatisfy({ Self.meaning(of: $0) == first }) else { return nil }
        self = first
    }

    private static func meaning(of word: String) -> PromptAnswer? {
        if updateNowWords.contains(word) { return .updateNow }
        if laterWords.contains(word) { return .later }
        return nil
    }

    /// Words that mean "update now". Each language's prompt labels and yes-words are here in
    /// every script in use (simplified and traditional Chinese both).
    static let updateNowWords: Set<String> = [
        "u", "1", "y", "yes", "now", "update", "update now", "[u]",
        "是", "是的", "好", "好的", "要", "立即更新", "立刻更新", "马上更新", "馬上更新", "现在更新", "現在更新", "更新",
        "现在", "現在",
        // Half of the shown label, as 今すぐ is of 今すぐアップデート (found by the language attack of
        // 2026-12-06), and "right away".
        "立即", "立刻", "马上", "馬上",
        "はい", "ハイ", "ええ", "うん", "今すぐアップデート", "今すぐ更新", "今すぐインストール", "アップデート", "今すぐ",
        "예", "네", "응", "지금 업데이트", "지금", "업데이트",
        // Each prompt's option as shown, typed whole (found by an attack: "[u]pdate now" and
        // "今すぐアップデート（ストアを開く）" were not understood), folded.
        "[u]pdate now", "[u] update now", "今すぐアップデート(ストアを開く)", "[u] 今すぐアップデート(ストアを開く)", "[u] 今すぐアップデート",
        "[u] 지금 업데이트", "[u] 立即更新",
        // And as the question asked again shows it (found by the next attack).
        "u (update now)", "u(update now)", "u(今すぐアップデート)", "u(지금 업데이트)", "u(立即更新)",
        // The keys u and y with an input method on (found by an attack: asked again until the run
        // gave up): Korean two-set (u ㅕ, y ㅛ), Japanese romaji (u う, yes いぇs), and the
        // Korean shorthand for yes (ㅇㅇ).
        "ㅕ", "ㅛ", "う", "いぇs", "ㅇㅇ",
    ]

    /// Words that mean "later".
    static let laterWords: Set<String> = [
        "l", "2", "n", "no", "later", "not now", "[l]",
        "否", "不", "不要", "稍後更新", "稍后更新", "稍後", "稍后", "以後", "以后", "以後再說", "以后再说",
        "いいえ", "イイエ", "いや", "後で", "あとで", "アトデ", "後でアップデート",
        "아니요", "아니오", "아니", "아뇨", "나중에", "나중에요", "나중에 업데이트",
        "[l]ater", "[l] later", "[l] 後で", "[l] 나중에", "[l] 稍后更新", "[l] 稍後更新",
        "l (later)", "l(later)", "l(後で)", "l(나중에)", "l(稍后更新)", "l(稍後更新)",
        // No in other words: "no need", "don't update", "not yet".
        "不用", "不用了", "不更新", "先不", "暂不", "暫不", "以后再更新", "以後再更新", "まだ", "今はいい", "아직",
        // The key l with the Korean input method on (two-set: ㅣ), "no" typed in Japanese romaji
        // (の), and the Korean shorthand for no (ㄴㄴ). Not ん (`n` in romaji, but `y` in JIS kana
        // input and a casual "yeah") nor ㅜ (`n` in two-set, but half of the crying ㅜㅜ): found by
        // the next attack, each spent a use.
        "ㅣ", "の", "ㄴㄴ",
        // "Next time", "in a while", "not for now" (found by the language attack of 2026-12-06,
        // each asked again): 다음에 is the usual Korean label for "later".
        "下次", "下次再说", "下次再說", "等会", "等会儿", "等會", "等一下", "晚点", "晚點", "晚点再说", "晚點再說", "先不要", "不要更新",
        "後ほど", "のちほど", "後でね", "あとでね", "また今度", "今度",
        "다음에", "다음", "나중", "이따가", "이따", "다음에 하기", "나중에 하기",
    ]

    /// `text` as it is compared: the width folding of Unicode's NFKC (``FullWidth``: full-width
    /// ASCII U+FF01–U+FF5E to ASCII, the ideographic space U+3000 to a space, half-width katakana
    /// U+FF61–U+FF9F to katakana: `ﾊｲ` is `ハイ`), lower case, white space trimmed and collapsed, and
    /// final full stops, exclamation marks and commas dropped (`はい。`, `はい、`, `Yes!`).
    public static func folded(_ text: String) -> String {
        var words = FullWidth.katakana(FullWidth.ascii(text)).lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        // Final full stops, commas and exclamation marks go, with the spaces an input method puts
        // before them (found by an attack: `はい　。` and `yes !` were asked again), and so do
        // spaces inside the parentheses of a shown choice or before them (`l （後で）`).
        while let last = words.last, ".!,。！、， ".contains(last) { words.removeLast() }
        for (spaced, tight) in [(" (", "("), ("( ", "("), (" )", ")")] {
            while words.contains(spaced) { words = words.replacing(spaced, with: tight) }
        }
        return words
    }
}
