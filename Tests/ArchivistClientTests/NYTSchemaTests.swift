import ArchivistBase
import ArchivistStore
import Testing

@testable import ArchivistClient

/// The NYT client's schema, which a store of articles is opened with.
@Suite struct NYTSchemaTests {
    @Test func searchedFieldsAreHeadlineKeywordsAbstractSnippetAndLeadParagraph() {
        #expect(Set(StoreSchema.nyt.textSearch.paths) == ["headline.main", "keywords.value", "abstract", "snippet", "lead_paragraph"])
    }
}
