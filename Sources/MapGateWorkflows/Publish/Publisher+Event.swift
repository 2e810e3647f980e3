import FoundationEssentials

extension Publisher {
    /// What one step of a publish came to, in the order they happen (the command renders them;
    /// the library prints nothing). A refused publish ends with the error, after the steps that
    /// were done: its regions' and styles' outcomes are never told.
    public enum Event: Sendable, Equatable {
        /// Every input was read and checked, nothing written yet: the regions, in order.
        case inputsChecked(regions: [String])
        /// The publisher's styles were read and checked against those regions.
        case stylesChecked(styles: [String])
        /// A region's new package is being made (compressed while its file is checked).
        case packing(region: String, version: String)
        /// It is made: its path under the output folder, and its size.
        case packed(region: String, package: String, size: Int64)
        /// A delta from an earlier version of the region was made and checked.
        case deltaMade(region: String, fromVersion: String, package: String, size: Int64)
        /// A style's new package was made.
        case stylePacked(style: String, package: String, size: Int64)
        /// The new catalog was made, checked as clients will read it, and signed.
        case signed(serial: Int64)
        /// The catalog, its signature and the history were written; the files no longer needed
        /// were removed (relative to the output folder).
        case written(catalog: String, removedFiles: [String])
        /// Something worth telling that did not stop the run (a delta left out and why, a version
        /// taken from metadata, a style's fonts); told with the outcomes, before them.
        case note(String)
        /// What a region came to (or in a dry run would).
        case region(PublishReport.Region)
        /// What a style came to (or in a dry run would).
        case style(PublishReport.Style)
        /// The end of the run, with everything it came to.
        case finished(PublishReport)
    }
}
