// libpq's types and constants (libpq-dev's libpq-fe.h), and a table of its functions filled by
// dlsym. Nothing here links libpq: `archivist` opens libpq.so.5 with dlopen only when a command
// talks to PostgreSQL (replicate, a postgresql:// data folder), so every other command starts
// without libpq and the libraries it brings (libssl, libcrypto, GSSAPI, LDAP).
//
// Each member of `archivist_pq` has the type of the libpq function of its name (`__typeof__`
// checks it against the header at compile time), so Swift calls them with libpq's own signatures.
#ifndef ARCHIVIST_CLIBPQ_SHIM_H
#define ARCHIVIST_CLIBPQ_SHIM_H

#include <dlfcn.h>
#include <stddef.h>
#include <postgresql/libpq-fe.h>

#define ARCHIVIST_PQ_FUNCTIONS(X) \
    X(PQconnectdb) \
    X(PQstatus) \
    X(PQerrorMessage) \
    X(PQfinish) \
    X(PQexec) \
    X(PQexecParams) \
    X(PQresultStatus) \
    X(PQresultErrorField) \
    X(PQresultErrorMessage) \
    X(PQntuples) \
    X(PQnfields) \
    X(PQfname) \
    X(PQgetvalue) \
    X(PQgetlength) \
    X(PQgetisnull) \
    X(PQcmdTuples) \
    X(PQclear) \
    X(PQputCopyData) \
    X(PQputCopyEnd) \
    X(PQgetResult) \
    X(PQconninfoParse) \
    X(PQconninfoFree) \
    X(PQhost) \
    X(PQport) \
    X(PQdb) \
    X(PQuser) \
    X(PQsocket) \
    X(PQconsumeInput) \
    X(PQnotifies) \
    X(PQfreemem) \
    X(PQsetNoticeProcessor) \
    X(PQserverVersion) \
    X(PQtransactionStatus)

#define ARCHIVIST_PQ_MEMBER(name) __typeof__(&name) name;

/// libpq's functions, as dlsym found them in the library opened.
typedef struct archivist_pq {
    ARCHIVIST_PQ_FUNCTIONS(ARCHIVIST_PQ_MEMBER)
} archivist_pq;

#undef ARCHIVIST_PQ_MEMBER

/// Fills `table` from `handle` (a dlopen of libpq.so.5); returns NULL, or the name of the first
/// function the library lacks.
static inline const char *archivist_pq_load(void *handle, archivist_pq *table) {
#define ARCHIVIST_PQ_LOAD(name) \
    table->name = (__typeof__(&name))dlsym(handle, #name); \
    if (table->name == NULL) return #name;
    ARCHIVIST_PQ_FUNCTIONS(ARCHIVIST_PQ_LOAD)
#undef ARCHIVIST_PQ_LOAD
    return NULL;
}

/// A notice processor that drops the server's notices ("relation already exists, skipping"):
/// Archivist reports what it did itself.
static inline void archivist_pq_ignore_notice(void *context, const char *message) {
    (void)context;
    (void)message;
}

#endif
