// The part of libedit Archivist uses. el_set and history are C-variadic, which Swift cannot
// call: each use is wrapped in a static inline function with a fixed signature.
#ifndef ARCHIVIST_CEDITLINE_SHIM_H
#define ARCHIVIST_CEDITLINE_SHIM_H

#include <stdio.h>
#include <histedit.h>

typedef char *(*archivist_prompt_function)(EditLine *);

static inline EditLine *archivist_el_init(const char *program) {
    return el_init(program, stdin, stdout, stderr);
}

static inline void archivist_el_set_prompt(EditLine *el, archivist_prompt_function prompt) {
    el_set(el, EL_PROMPT, prompt);
}

static inline void archivist_el_use_emacs(EditLine *el) {
    el_set(el, EL_EDITOR, "emacs");
}

static inline void archivist_el_set_history(EditLine *el, History *list) {
    el_set(el, EL_HIST, history, list);
}

static inline History *archivist_history_init(int size) {
    History *list = history_init();
    HistEvent event;
    history(list, &event, H_SETSIZE, size);
    history(list, &event, H_SETUNIQUE, 1);
    return list;
}

static inline void archivist_history_enter(History *list, const char *line) {
    HistEvent event;
    history(list, &event, H_ENTER, line);
}

/* Archivist reads and writes its history file itself (HistoryFile.swift): libedit's H_LOAD overruns
   a buffer on some lines. Its writer is kept for the tests and the fuzzer, which check that the
   files it writes read back the same. */
static inline int archivist_history_save(History *list, const char *path) {
    HistEvent event;
    return history(list, &event, H_SAVE, path);
}

static inline void archivist_history_clear(History *list) {
    HistEvent event;
    history(list, &event, H_CLEAR);
}

/* The oldest entry, or NULL when the history is empty (libedit keeps the newest first). */
static inline const char *archivist_history_oldest(History *list) {
    HistEvent event;
    return history(list, &event, H_LAST) == 0 ? event.str : NULL;
}

/* The entry after the current one towards the newest, or NULL past the newest. */
static inline const char *archivist_history_newer(History *list) {
    HistEvent event;
    return history(list, &event, H_PREV) == 0 ? event.str : NULL;
}

typedef unsigned char (*archivist_key_function)(EditLine *, int);

static inline void archivist_el_bind_tab(EditLine *el, archivist_key_function function) {
    el_set(el, EL_ADDFN, "archivist-complete", "Complete a command, option, field or ID", function);
    el_set(el, EL_BIND, "^I", "archivist-complete", NULL);
}

#endif
