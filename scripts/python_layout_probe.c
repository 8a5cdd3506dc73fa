/*
 * python_layout_probe.c — prints the offsets common/python_layout.c holds for
 * one CPython minor version, compiled against that version's own headers
 * (internal ones included) by scripts/python-layout.  Not part of the build.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_MINOR_VERSION == 10
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "frameobject.h"
#else
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_frame.h"
#endif
#define P(name, expr) printf("%s=%zu\n", name, (size_t)(expr))
int main(void) {
	printf("minor=%d\n", PY_MINOR_VERSION);
	P("rt_interp_main", offsetof(_PyRuntimeState, interpreters.main));
#if PY_MINOR_VERSION == 10
	P("interp_threads_head", offsetof(PyInterpreterState, tstate_head));
	P("ts_frame", offsetof(PyThreadState, frame));
	P("fr_code", offsetof(PyFrameObject, f_code));
	P("fr_prev", offsetof(PyFrameObject, f_back));
	P("fr_instr", offsetof(PyFrameObject, f_lasti));
#else
	P("interp_threads_head", offsetof(PyInterpreterState, threads.head));
#if PY_MINOR_VERSION <= 12
	P("ts_frame", offsetof(PyThreadState, cframe));
	P("cf_current", offsetof(_PyCFrame, current_frame));
	P("fr_code", offsetof(_PyInterpreterFrame, f_code));
	P("fr_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
	P("ts_frame", offsetof(PyThreadState, current_frame));
	P("fr_code", offsetof(_PyInterpreterFrame, f_executable));
	P("fr_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	P("fr_prev", offsetof(_PyInterpreterFrame, previous));
	P("fr_owner", offsetof(_PyInterpreterFrame, owner));
	P("co_qualname", offsetof(PyCodeObject, co_qualname));
	P("co_bytecode", offsetof(PyCodeObject, co_code_adaptive));
	P("co_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
#endif
	P("ts_next", offsetof(PyThreadState, next));
	P("ts_thread_id", offsetof(PyThreadState, thread_id));
	P("co_filename", offsetof(PyCodeObject, co_filename));
	P("co_name", offsetof(PyCodeObject, co_name));
	P("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("co_linetable", offsetof(PyCodeObject, co_linetable));
	P("str_ascii", sizeof(PyASCIIObject));
	P("str_compact", sizeof(PyCompactUnicodeObject));
	P("str_utf8", offsetof(PyCompactUnicodeObject, utf8));
	P("str_utf8_len", offsetof(PyCompactUnicodeObject, utf8_length));
	P("str_state", offsetof(PyASCIIObject, state));
	/* the garbage collector's flag, and the GIL's last holder (a thread
	 * state): in _PyRuntime up to 3.11, in each interpreter from 3.12 (the
	 * main interpreter's ceval.gil points at its own _gil) */
	P("gc_collecting", offsetof(PyInterpreterState, gc.collecting));
#if PY_MINOR_VERSION <= 11
	P("gil_holder_rt", offsetof(_PyRuntimeState, ceval.gil.last_holder));
#else
	P("gil_holder_interp", offsetof(PyInterpreterState, _gil.last_holder));
#endif
#if PY_MINOR_VERSION >= 13
	/* where _Py_DebugOffsets keeps them (common/python_layout.c) */
	P("dbg_interp_gc", offsetof(_Py_DebugOffsets, interpreter_state.gc));
	P("dbg_gil_holder", offsetof(_Py_DebugOffsets, interpreter_state.gil_runtime_state_holder));
	P("dbg_gc_size", offsetof(_Py_DebugOffsets, gc.size));
	P("dbg_gc_collecting", offsetof(_Py_DebugOffsets, gc.collecting));
	P("dbg_bytes", sizeof(_Py_DebugOffsets));
#endif
	P("bytes_data", offsetof(PyBytesObject, ob_sval));
	return 0;
}
