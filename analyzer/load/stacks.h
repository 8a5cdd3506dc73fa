/*
 * stacks.h — naming a stack: its Python line and a short native label.
 *
 * A stack's frames (kind 'kernel', 'native' or 'python', depth 0 =
 * innermost) are read by its id (frames.h, either layout of the file), and
 * answers are cached per stack id, since the same few stacks come back for
 * thousands of calls.
 */
#ifndef IA_STACKS_H
#define IA_STACKS_H

#include "load/trace.h"

struct ia_stack_names;   /* opaque cache */

struct ia_stack_names *ia_stack_names_new(sqlite3 *db);
void ia_stack_names_free(struct ia_stack_names *n);
/* -1 with the reason in err when a lookup could not read a stack's frames (a
 * corrupted page: it answered NULL); 0 when every lookup so far read it. */
int ia_stack_names_error(const struct ia_stack_names *n, char *err, size_t errlen);

/* Innermost Python frame as "file:line", or NULL when the stack has none. */
const char *ia_stack_python(struct ia_stack_names *n, uint64_t stack_id);
/* Innermost Python function name, or NULL. */
const char *ia_stack_python_func(struct ia_stack_names *n, uint64_t stack_id);
/* Innermost native symbol, or NULL. */
const char *ia_stack_leaf(struct ia_stack_names *n, uint64_t stack_id);
/* Up to three innermost native symbols joined by " < ", or NULL. */
const char *ia_stack_native(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when the stack was running Python code: it has Python frames (an
 * on-CPU sample of a CPython thread) and its innermost native frame is
 * CPython's own (libpython, or a python executable), or it has none. */
int ia_stack_runs_python(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when one of its Python frames is torch.compile's compile-time code
 * (ia_is_compile_file): the sample was compiling, not running the model. */
int ia_stack_compiling(struct ia_stack_names *n, uint64_t stack_id);
/* For a DataLoader worker's block: 1 when it was loading — under the
 * DataLoader's fetch of items (torch/utils/data/_utils/fetch.py: the
 * Dataset's code runs under it, whoever wrote that Dataset), or, outside
 * torch's worker loop, in code of the user's own — and 0 when it waited
 * for its next index in the worker loop (a forked worker's stack still
 * holds the user's frames from before the fork: the loop's line). */
int ia_stack_loading(struct ia_stack_names *n, uint64_t stack_id);
/* The line such a block loads at: the innermost frame of the user's own
 * code inside the fetch (the Dataset's __getitem__), else the innermost
 * Python frame (a library Dataset's read); NULL without Python frames. */
const char *ia_stack_loading_line(struct ia_stack_names *n, uint64_t stack_id);
/* The phase reason of the stack (enum ia_phase_why, phase_rules.h): the
 * highest-ranked reason any of its frames gives, alone or with another
 * (ia_hints_why); 0 when none. */
int ia_stack_phase_why(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when one of its native or Python frames alone gives a reason of that
 * phase (enum ia_phase): a process's role (per_process.c) is told by any
 * frame, not by the stack's highest-ranked reason. */
int ia_stack_has_phase(struct ia_stack_names *n, uint64_t stack_id, int phase);
/* 1 when a Python frame of it is torch.utils.data's (a DataLoader's). */
int ia_stack_torch_data(struct ia_stack_names *n, uint64_t stack_id);
/* The mechanism it was in (enum ia_mech, mechanisms.h): the innermost
 * native frame that names one, else a Python frame's; 0 when none. */
int ia_stack_mech(struct ia_stack_names *n, uint64_t stack_id);
/* enum ia_instrument (mechanisms.h): a debugging instrument any of its frames names */
int ia_stack_instrument(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when its innermost frame of the user's own code runs under
 * torch.compile's wrapper (a frame of torch/_dynamo/eval_frame.py outside
 * it): code of a compiled function that runs eagerly, between graphs — where
 * it reads the GPU, a graph break's (compiled code's own frames are
 * Inductor's generated files, not the user's line). */
int ia_stack_user_compiled(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when a native frame of it is PyTorch's caching allocator allocating a
 * block (DeviceCachingAllocator::malloc), or a tensor being allocated
 * (at::detail::empty_generic, empty_strided_generic: the frame above it,
 * where libc10_cuda has no symbols): a cudaFree under it is the allocator
 * handing its cache back to retry an allocation that did not fit
 * (release_cached_blocks), not an empty_cache(). */
int ia_stack_in_alloc(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when a native frame of it is ATen's cuDNN convolution, forward or
 * backward (at::native::cudnn_convolution*, convolution_backward): a
 * cudaFree under it is the caching allocator handing its cache back when
 * a workspace did not fit — with cudnn.benchmark, a candidate plan's (c12:
 * 119 frees, all under one, libc10_cuda's frames unnamed). */
int ia_stack_in_conv(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when a Python frame of it is Hugging Face Transformers' generation
 * (transformers/generation/: model.generate's decoding loop). */
int ia_stack_hf_generate(struct ia_stack_names *n, uint64_t stack_id);
/* 1 when its outermost Python frame begins a thread (a module's <module>,
 * threading's or multiprocessing's bootstrap): the Python stack is whole,
 * not cut at its innermost frames. */
int ia_stack_py_whole(struct ia_stack_names *n, uint64_t stack_id);
/* Its frames' hints (enum ia_frame_hint), OR-ed. */
unsigned ia_stack_phase_hints(struct ia_stack_names *n, uint64_t stack_id);
/* For a stack that imports: the file of the outermost library module
 * running its top-level code (what the program imported), or NULL. */
const char *ia_stack_import_module(struct ia_stack_names *n, uint64_t stack_id);
/* The innermost Python frame in the user's own code (ia_is_library_file)
 * as "file:line", or NULL. */
const char *ia_stack_user_python(struct ia_stack_names *n, uint64_t stack_id);
/* The innermost (outermost 0) or outermost ATen operation its native
 * frames entered (aten_ops.h: "nonzero", "index_Tensor"), or NULL. */
const char *ia_stack_aten(struct ia_stack_names *n, uint64_t stack_id, int outermost);
/* The line a finding points at: the innermost frame in the user's own code
 * when there is one (a launch inside torch.nn is the user's forward call),
 * else the innermost Python frame; NULL without Python frames. */
const char *ia_stack_source(struct ia_stack_names *n, uint64_t stack_id);

#endif
