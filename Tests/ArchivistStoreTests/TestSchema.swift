import ArchivistBase
import ArchivistStore

extension StoreSchema {
    /// The engine tests' own schema, for the NYT-shaped documents they store (ArticleGenerator's,
    /// the real folders of `Fixtures/`): the engine knows nothing of the NYT, and neither do its
    /// tests; the NYT client's schema (`StoreSchema.nyt`) is tested with the client.
    ///
    /// Its index holds the short fields the tests filter, sort and facet on, then the long ones
    /// (the projection the format fixtures were written with); full-text search reads the headline
    /// (weight 3), the keywords (2), the abstract, the snippet and the lead paragraph (1 each); and
    /// it has two side files, `TestSideFile.searches` and `TestSideFile.usage`.
    static let testArticles: StoreSchema = {
        let short = ["document_type", "news_desk", "pub_date", "section_name", "type_of_material", "word_count"]
        let long = ["abstract", "byline.original", "headline.main", "keywords.value", "lead_paragraph", "snippet", "web_url"]
        let searched: [(path: String, weight: Double)] = [
            ("headline.main", 3), ("keywords.value", 2), ("abstract", 1), ("snippet", 1), ("lead_paragraph", 1),
        ]
        return StoreSchema(
            projection: Projection(paths: short + long, longPaths: Set(long)), longPaths: Set(long),
            textSearch: TextSearch(fields: searched.map { TextSearch.Field($0.path, weight: $0.weight) }),
            sideFiles: [TestSideFile.searches, TestSideFile.usage],
            // The fixtures' IDs are the NYT's (`nyt://article/<uuid>`), and their files were named
            // without that prefix (`article~<uuid>`).
            idPrefix: "nyt://")
    }()
}

/// The side files of `StoreSchema.testArticles`.
enum TestSideFile {
    /// A side file of saved searches.
    static let searches = "searches.json"
    /// A side file of request counts.
    static let usage = "api-usage.json"
}
