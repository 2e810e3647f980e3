import FoundationEssentials
import MapGateBase

/// What the viewer pages (the region list and both viewers) tell the person looking at the map
/// about the update gate, in the page's language (issue 37): they read `/health` on load and every
/// 30 seconds, and while a newer version is known show
/// - during the grace, a small notice (the version, the day prompts start);
/// - after it, a prompt on each page load: the version, the release notes (as text), the uses
///   left ("this one included", as the terminal says), **Update now** (opens the store's page)
///   and **Later** (dismisses it for this page);
/// - once the gate is closed, an overlay saying what to install, with a link to the store;
/// - while the server cannot check the gate (it answers tiles 503), an overlay saying the maps
///   are paused; when the server does not answer, or the page's region is no longer installed,
///   a notice on the bar. Each goes when its cause does.
/// The page only tells: the server counts its uses as it always has.
extension ViewerPage {
    /// The pieces a page adds: its style, its elements, its script and what the script reads
    /// (`page.update`).
    struct UpdateWatcher {
        var style: String
        var body: String
        var data: JSONValue
        var script: String
    }

    /// The most uses a policy gives that the page has words for; more read as this many.
    static let usesLeftWords = 10

    static func updateWatcher(language: PageLanguage) -> UpdateWatcher {
        // The page fills a message's placeholders itself: each is left as U+0001 and its number.
        func slot(_ number: Int) -> String { "\u{1}\(number)" }
        let usesLeft = (1...usesLeftWords).map { count -> JSONValue in
            let left = language.localized(singular: "%d use left, this one included", plural: "%d uses left, this one included", count: count)
            let after = count - 1
            let then = after == 0
                ? language.localized("after this one mapgate requires the update.")
                : language.localized(singular: "after %d more mapgate requires the update.", plural: "after %d more mapgate requires the update.", count: after)
            return .string(language.localized("%1$s: %2$s", left.replacing("%d", with: String(count)), then.replacing("%d", with: String(after))))
        }
        let body = """
            <div id="update"></div><div id="prompt" role="dialog" aria-modal="true"><div><h2></h2><ul></ul><p class="left"></p>
            <div class="buttons"><button id="later" type="button"></button><a id="update-now" target="_blank" rel="noopener noreferrer"></a></div></div></div>
            """
        let words: [String: JSONValue] = [
            "available": .string(language.localized("mapgate %1$s is available (you have %2$s).", slot(1), slot(2))),
            "soon": .string(language.localized("mapgate %1$s is available; please update (prompts start %2$s)", slot(1), slot(2))),
            "updateNow": .string(language.localized("Update now")), "later": .string(language.localized("Later")),
            "required": .string(language.localized("Update required")),
            "install": .string(language.localized("Install mapgate %1$s to keep using these maps.", slot(1))),
            "store": .string(language.localized("Update from the store")), "left": .array(usesLeft),
            "paused": .string(language.localized("Maps paused")),
            "pausedReason": .string(language.localized("mapgate cannot check its update rules right now; the map goes on as soon as it can.")),
            "offline": .string(language.localized("The map server is not answering: what is shown may be out of date.")),
            "removed": .string(language.localized("This region is no longer installed: what is shown may be out of date.")),
            "noSession": .string(language.localized("No map session is open on this machine (run mapgate open or mapgate serve): what is shown may be out of date.")),
        ]
        let data: JSONValue = .object(["words": .object(words), "installed": .string(BuildInfo.version), "lang": .string(language.tag)])
        return UpdateWatcher(style: ViewerAssets.updateWatcherStyle, body: body, data: data, script: ViewerAssets.updateWatcherScript)
    }
}
