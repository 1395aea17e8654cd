import ArchivistBase

extension StoreSchema {
    /// The schema of a folder of NYT articles: the fields queries on articles use (dates,
    /// sections, desks, types, headline, byline, word count, URL, keywords) and the text that
    /// full-text search reads, headline weighted 3, keywords 2, abstract, snippet and lead
    /// paragraph 1; the long ones last in each index line; the client's side files; and the `nyt://`
    /// of the API's IDs, which file names leave out (`nyt://article/<uuid>` is `article~<uuid>.json`).
    public static let nyt: StoreSchema = {
        let longPaths: Set<String> = [
            "abstract", "snippet", "lead_paragraph", "keywords.value", "headline.main", "web_url",
            "byline.original",
        ]
        let projection = Projection(
            paths: [
                "pub_date", "section_name", "news_desk", "document_type", "type_of_material",
                "headline.main", "byline.original", "word_count", "web_url", "keywords.value",
                "abstract", "snippet", "lead_paragraph",
            ], longPaths: longPaths)
        let textSearch = TextSearch(fields: [
            .init("headline.main", weight: 3), .init("keywords.value", weight: 2), .init("abstract", weight: 1),
            .init("snippet", weight: 1), .init("lead_paragraph", weight: 1),
        ])
        return StoreSchema(
            projection: projection, longPaths: longPaths, textSearch: textSearch, sideFiles: ClientFiles.all, idPrefix: "nyt://")
    }()
}
