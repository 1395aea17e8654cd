import ArchivistBase

extension DocumentStore {
    /// When the folder was created (`archivist.json`'s `created_at`), or nil when the folder has no
    /// metadata file yet (nothing was ever written to it). A copy of the folder made elsewhere
    /// (`replicate`) records it to tell this folder from another one put in its place.
    public var createdAt: Timestamp? {
        get throws(StoreError) {
            try withState { (state: inout State) throws(StoreError) -> Timestamp? in
                try self.refresh(&state)
                guard try self.fileSystem.status(of: self.path(FileNames.metadata)) != nil else { return nil }
                return state.metadata.createdAt
            }
        }
    }
}
