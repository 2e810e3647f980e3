import FoundationEssentials

/// The viewer pages' scripts and styles: files in `Sources/MapGateServer/Viewer/`, embedded by
/// the build (`.embedInCode` in Package.swift), so nothing is read from disk when a page is
/// served and the binary needs no resource bundle beside it. Each script reads what the page
/// gives it from `page`, a JSON object the page defines before it (``ViewerPage/inlineScript(page:watcher:main:)``).
enum ViewerAssets {
    static let rasterViewerScript = text(PackageResources.raster_viewer_js)
    static let rasterViewerStyle = text(PackageResources.raster_viewer_css)
    static let vectorViewerScript = text(PackageResources.vector_viewer_js)
    static let vectorViewerStyle = text(PackageResources.vector_viewer_css)
    static let updateWatcherScript = text(PackageResources.update_watcher_js)
    static let updateWatcherStyle = text(PackageResources.update_watcher_css)

    private static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
