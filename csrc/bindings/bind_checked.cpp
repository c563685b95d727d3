// _C._Checked(fn, on_error, reduce[, key[, parsed]]): calls fn (or, once autograd has armed it and
// a tensor argument requires grad, its recorder: Note [Recording slots]); when that raises, first
// calls on_error(exception, args, kwargs), which may raise torch's error in its place (Note
// [Argument errors] in python/cudalite/_checked.py) or return (result,) to stand for the
// call's result; when it returns None, fn's exception propagates as it was.
//
// Written in C so that it adds no Python frame: warnings.warn(stacklevel=...) in the wrapped
// function still points at the caller's line, and a call costs one vectorcall more. It binds
// as a method (a descriptor with Py_TPFLAGS_METHOD_DESCRIPTOR, as Python functions are) and
// reads __name__, __doc__ and the like from the function it wraps (__wrapped__); `reduce` is
// what pickling it returns.
#include <Python.h>
#include <structmember.h>

#include "bindings/arg_parser.h"
#include "bindings/convert.h"

namespace cl::bind {

namespace {

// Note [Recording slots]
// A Tensor method that autograd records is a _Checked whose `recorder` slot is empty until
// autograd is armed (the first tensor made to require grad: autograd/_arm.py), which fills
// the slots instead of replacing the methods, so `Tensor.mul_` is the same object before and
// after. Each call decides at the entry: when the slot is filled and a tensor argument (or a
// tensor in a list or tuple argument) requires grad, the recorder runs, which records in
// grad mode and otherwise calls the method's own function (`__wrapped__`); every other call
// goes straight to that function. Checking the flags costs a few loads per argument.
struct Checked {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* fn;
  PyObject* on_error;
  PyObject* reduce;  // what __reduce__ returns: how pickle finds the wrapper again
  PyObject* dict;
  PyObject* recorder;  // null until armed
  int cast_policy;     // its autocast list (Note [Autocast at the entry]); 0: none
  // Note [Parsing at the entry]: (kind, name) of a function with torch signatures, else
  // null; its parser, compiled on the first call.
  PyObject* key;
  PyObject* parser_obj;
  FunctionParser* parser;
  int parser_state;  // 0: not loaded yet, 1: loaded, 2: none
  bool method;       // args[0] is self, which torch's method signatures leave out
  bool parsed;       // fn takes the parser's values (Note [Parsed calls])
  // The types of the last call that fit by its types alone (Note [Parsing at the entry])
  Py_ssize_t cached_nargs;  // -1: none
  PyObject* cached_kwnames;
  PyTypeObject* cached_types[6];
};

// Note [Parsing at the entry]
// A function with torch signatures has them compiled (arg_parser.h) on its first call, from
// _signatures.json through the loader _checked.py sets. Every call is then matched against
// them before the function runs, on the vectorcall's arguments as they are (no tuple, no
// dict): the type checks of a few arguments against one or two signatures. A call that fits
// one goes on as before; a call that fits none raises torch's TypeError there, from the
// same parse, without running the function. Three kinds of call that fit none go on
// instead, for the check after a failure (Note [Argument errors]) to read as it does: a
// keyword given None (wrappers forward their defaults), a NumPy keyword name (axis=,
// keepdims=: renamed after the failure), and a forwarded _Absent marker.
//
// The entry remembers the argument types of the last call that fit because of its types
// alone (tensors, ints, floats, bools, None, strings, dtypes; no tensor in the place of a
// number, no list): a call with the same keyword names (the same tuple of a call site) and
// the same types fits too, and skips the matching (a few pointer compares).
//
// Only the outermost entry parses: a call that cudalite's own Python code makes while another
// entry's function runs (a method forwarding to a function, a loss calling expand) is an
// internal call, which torch makes in C++ without its parser, so it goes straight on, as do
// user callbacks run from inside an op (hooks during backward), which are checked after a
// failure.
thread_local int t_entry_depth = 0;
PyObject* g_parser_loader = nullptr;  // loader(kind, name) -> _ArgParser or None
PyObject* g_absent_type = nullptr;    // _reductions._Absent

// Note [Autocast at the entry]
// An op in one of torch's autocast lists (python/cudalite/amp/autocast_mode.py) has its
// list's number in its entry. While an autocast region is enabled in this thread, such a
// call goes to the autocast hook, which casts the eligible tensor arguments and calls the
// entry again with autocast suspended (as torch's Autocast dispatch key excludes itself), so
// autograd then records the casts and the op. Outside regions the check is one load.
thread_local int t_autocast = 0;
PyObject* g_autocast_hook = nullptr;  // hook(policy, entry, args, kwargs)
}  // namespace

bool autocast_active() { return t_autocast != 0; }

namespace {

bool requires_grad(PyObject* o) {
  if (!is_tensor(o)) return false;
  auto v_h = reinterpret_cast<py::detail::instance*>(o)->get_value_and_holder();
  return v_h.holder_constructed() && v_h.template holder<Tensor>()->requires_grad;
}

bool any_requires_grad(PyObject* const* args, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* a = args[i];
    if (requires_grad(a)) return true;
    if (PyList_Check(a) || PyTuple_Check(a)) {
      PyObject* seq = a;
      Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
      PyObject** items = PySequence_Fast_ITEMS(seq);
      for (Py_ssize_t j = 0; j < len; ++j) {
        if (requires_grad(items[j])) return true;
      }
    }
  }
  return false;
}

// A vectorcall's arguments as a new tuple and a new dict; false with the error set.
bool pack_call(PyObject* const* args, size_t nargsf, PyObject* kwnames, PyObject** tuple_out,
               PyObject** kw_out) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* tuple = PyTuple_New(n);
  if (!tuple) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(tuple, i, args[i]);
  }
  PyObject* kw = PyDict_New();
  if (!kw) {
    Py_DECREF(tuple);
    return false;
  }
  for (Py_ssize_t i = 0; i < nk; ++i) {
    if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) {
      Py_DECREF(tuple);
      Py_DECREF(kw);
      return false;
    }
  }
  *tuple_out = tuple;
  *kw_out = kw;
  return true;
}

// on_error(exc, args, kwargs) with the call's arguments rebuilt as a tuple and a dict.
PyObject* call_on_error(Checked* c, PyObject* exc, PyObject* const* args, size_t nargsf,
                        PyObject* kwnames) {
  PyObject* tuple = nullptr;
  PyObject* kw = nullptr;
  if (!pack_call(args, nargsf, kwnames, &tuple, &kw)) return nullptr;
  PyObject* r = PyObject_CallFunctionObjArgs(c->on_error, exc, tuple, kw, nullptr);
  Py_DECREF(tuple);
  Py_DECREF(kw);
  return r;
}

PyObject* checked_dispatch(Checked* c, PyObject* const* args, size_t nargsf, PyObject* kwnames);

PyObject* checked_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* c = reinterpret_cast<Checked*>(self);
  if (t_autocast && c->cast_policy && g_autocast_hook) {
    PyObject* policy = PyLong_FromLong(c->cast_policy);
    if (!policy) return nullptr;
    PyObject* tuple = nullptr;
    PyObject* kw = nullptr;
    if (!pack_call(args, nargsf, kwnames, &tuple, &kw)) {
      Py_DECREF(policy);
      return nullptr;
    }
    PyObject* r = PyObject_CallFunctionObjArgs(g_autocast_hook, policy, self, tuple, kw, nullptr);
    Py_DECREF(policy);
    Py_DECREF(tuple);
    Py_DECREF(kw);
    return r;
  }
  return checked_dispatch(c, args, nargsf, kwnames);
}

FunctionParser* parser_of(Checked* c) {
  if (c->parser_state == 0) {
    c->parser_state = 2;
    if (g_parser_loader && c->key && PyTuple_Check(c->key)) {
      PyObject* p = PyObject_CallObject(g_parser_loader, c->key);
      if (!p) {
        PyErr_WriteUnraisable(c->fn);  // the call goes on unchecked
      } else if (p == Py_None) {
        Py_DECREF(p);
      } else {
        try {
          c->parser = py::cast<FunctionParser*>(py::handle(p));
          c->parser_obj = p;
          c->parser_state = 1;
        } catch (const py::cast_error&) {
          Py_DECREF(p);
        }
      }
    }
  }
  return c->parser_state == 1 ? c->parser : nullptr;
}

bool is_numpy_name(PyObject* key) {
  static const char* names[] = {"axis", "keepdims", "x", "a", "x1", "x2"};
  for (const char* n : names) {
    if (PyUnicode_CompareWithASCIIString(key, n) == 0) return true;
  }
  return false;
}

// Whether a call that fits no signature is refused at the entry (Note [Parsing at the
// entry]).
bool refusable(PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < n + nk; ++i) {
    if (g_absent_type && PyObject_TypeCheck(args[i], (PyTypeObject*)g_absent_type)) return false;
  }
  for (Py_ssize_t i = 0; i < nk; ++i) {
    if (args[n + i] == Py_None || is_numpy_name(PyTuple_GET_ITEM(kwnames, i))) return false;
  }
  return true;
}

// torch's error raised at the entry, marked as the argument check's (Note [Argument
// errors]: outer entries word it again with their own arguments).
void mark_checked() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value && PyObject_SetAttrString(value, "_cl_checked", Py_True) < 0) PyErr_Clear();
  if (tb && value) PyException_SetTraceback(value, tb);
  PyErr_Restore(type, value, tb);
}

constexpr Py_ssize_t kCachedArgs = 6;

// Whether an object of this type fits a parameter by its type alone.
bool cacheable_type(PyTypeObject* t) {
  static PyTypeObject* dtype_type = Py_TYPE(dtype_pyobject(ScalarType::Float32));
  return t == reinterpret_cast<PyTypeObject*>(tensor_type().ptr()) || t == &PyLong_Type ||
         t == &PyFloat_Type || t == &PyBool_Type || t == Py_TYPE(Py_None) || t == &PyUnicode_Type ||
         t == dtype_type;
}

bool cache_hit(const Checked* c, PyObject* const* args, Py_ssize_t n, PyObject* kwnames,
               Py_ssize_t total) {
  if (c->cached_nargs != n || c->cached_kwnames != kwnames || total > kCachedArgs) return false;
  for (Py_ssize_t i = 0; i < total; ++i) {
    if (Py_TYPE(args[i]) != c->cached_types[i]) return false;
  }
  return true;
}

void cache_store(Checked* c, PyObject* const* args, Py_ssize_t n, PyObject* kwnames,
                 Py_ssize_t total) {
  if (total > kCachedArgs) return;
  for (Py_ssize_t i = 0; i < total; ++i) {
    if (!cacheable_type(Py_TYPE(args[i]))) return;
  }
  for (Py_ssize_t i = 0; i < total; ++i) c->cached_types[i] = Py_TYPE(args[i]);
  Py_XINCREF(kwnames);
  Py_XSETREF(c->cached_kwnames, kwnames);
  c->cached_nargs = n;
}

// 1: the call goes on; -1: torch's error is set.
int parse_at_entry(Checked* c, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t total = n + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  if (cache_hit(c, args, n, kwnames, total)) return 1;
  FunctionParser* p = parser_of(c);
  if (!p) return 1;
  Py_ssize_t skip = c->method ? 1 : 0;
  if (n < skip) return 1;
  bool determined = false;
  int r = p->fits(args + skip, n - skip, kwnames, &determined);
  if (r > 0) {
    if (determined) cache_store(c, args, n, kwnames, total);
    return 1;
  }
  if (r == 0) {
    if (!refusable(args + skip, n - skip, kwnames)) return 1;
    if (p->refuse(args + skip, n - skip, kwnames) == 0) return 1;
  }
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_WriteUnraisable(c->fn);  // not torch's: the call goes on unchecked
    return 1;
  }
  mark_checked();
  return -1;
}

// Note [Parsed calls]
// A function made with parsed=True receives the parser's values instead of the caller's
// arguments, as torch's bindings receive ParsedArgs: the entry matches the call against the
// function's signatures (every call, internal ones included, since the function relies on
// it), converts the values of the signature that fits (ints and int lists unpacked, Python
// types read as dtypes, defaults filled in) and calls the function (or its recorder) as the
// signature is written: self, the positional parameters by position, the keyword-only ones
// by keyword, all of them given. The Python `def` is then the signature's parameters, with
// no parsing of its own; overloads whose parameters have other names (diagonal's dimension
// names) arrive as keywords the `def` also takes. Calls that fit no signature go on as
// parse_at_entry decides, with the caller's arguments (the check after a failure reads
// them); so do calls that fit a hidden (deprecated) signature.
enum class Parsed { Raw, Called, Refused };

// Calls target with the parser's values (Called: its result, or nullptr with its error);
// Refused: the parse raised torch's error; Raw: the caller's arguments go on as they are.
Parsed call_parsed(Checked* c, PyObject* target, PyObject* const* args, size_t nargsf,
                   PyObject* kwnames, PyObject** result) {
  *result = nullptr;
  FunctionParser* p = parser_of(c);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t skip = c->method ? 1 : 0;
  if (!p || n < skip) return Parsed::Raw;
  PyObject* values[Signature::kMaxParsedParams];
  const Signature* sig = nullptr;
  for (const Signature& s : p->signatures) {
    int r = s.parse_values(args + skip, n - skip, kwnames, values);
    if (r < 0) {
      mark_checked();  // torch's unpacking errors, raised by its parser
      return Parsed::Refused;
    }
    if (r > 0) {
      sig = &s;
      break;
    }
  }
  if (!sig) return parse_at_entry(c, args, nargsf, kwnames) < 0 ? Parsed::Refused : Parsed::Raw;
  size_t nvalues = sig->params.size();
  if (sig->hidden) {  // a deprecated order: the check after the failure reorders it
    for (size_t i = 0; i < nvalues; ++i) Py_DECREF(values[i]);
    return Parsed::Raw;
  }
  // self, the positional parameters, then the keyword-only ones; a free slot in front
  // (PY_VECTORCALL_ARGUMENTS_OFFSET)
  PyObject* call_buf[Signature::kMaxParsedParams + 2];
  PyObject** call = call_buf + 1;
  if (skip) call[0] = args[0];
  size_t npos = 0;
  for (size_t i = 0; i < nvalues; ++i) {
    if (!sig->params[i].keyword_only) call[skip + npos++] = values[i];
  }
  size_t k = npos;
  for (size_t i = 0; i < nvalues; ++i) {
    if (sig->params[i].keyword_only) call[skip + k++] = values[i];
  }
  PyObject* kwonly = sig->keyword_names();
  if (!kwonly && k > npos) {  // the names' tuple could not be made (no memory)
    for (size_t i = 0; i < nvalues; ++i) Py_DECREF(values[i]);
    return Parsed::Refused;
  }
  ++t_entry_depth;
  *result =
      PyObject_Vectorcall(target, call, (skip + npos) | PY_VECTORCALL_ARGUMENTS_OFFSET, kwonly);
  --t_entry_depth;
  for (size_t i = 0; i < nvalues; ++i) Py_DECREF(values[i]);
  return Parsed::Called;
}

// The call past the autocast check: the recorder or the function, and on_error.
PyObject* checked_dispatch(Checked* c, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (c->key && !c->parsed && t_entry_depth == 0 && parse_at_entry(c, args, nargsf, kwnames) < 0) {
    return nullptr;
  }
  PyObject* target = c->fn;
  if (c->recorder) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    if (any_requires_grad(args, n)) target = c->recorder;
  }
  PyObject* r = nullptr;
  Parsed how = Parsed::Raw;
  if (c->parsed) {
    how = call_parsed(c, target, args, nargsf, kwnames, &r);
    if (how == Parsed::Refused) return nullptr;  // torch's error: the function never ran
  }
  if (how == Parsed::Raw) {
    ++t_entry_depth;
    r = PyObject_Vectorcall(target, args, nargsf, kwnames);
    --t_entry_depth;
  }
  if (r || !PyErr_ExceptionMatches(PyExc_Exception)) return r;  // KeyboardInterrupt passes
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb) PyException_SetTraceback(value, tb);
  PyObject* handled = call_on_error(c, value, args, nargsf, kwnames);
  if (!handled) {  // on_error raised its replacement
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return nullptr;
  }
  if (PyTuple_Check(handled) && PyTuple_GET_SIZE(handled) == 1) {  // the call's result
    PyObject* result = PyTuple_GET_ITEM(handled, 0);
    Py_INCREF(result);
    Py_DECREF(handled);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return result;
  }
  Py_DECREF(handled);
  PyErr_Restore(type, value, tb);
  return nullptr;
}

// entry._call_bypassing_autocast(*args, **kwargs): the call as the entry makes it outside
// autocast regions (the hook's way to run an op its device type's lists leave alone).
PyObject* checked_bypass(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  return checked_dispatch(reinterpret_cast<Checked*>(self), args, size_t(nargs), kwnames);
}

PyObject* checked_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *fn, *on_error, *reduce, *key = nullptr;
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "_Checked() takes no keyword arguments");
    return nullptr;
  }
  PyObject* parsed = nullptr;
  if (!PyArg_UnpackTuple(args, "_Checked", 3, 5, &fn, &on_error, &reduce, &key, &parsed)) {
    return nullptr;
  }
  if (key == Py_None) key = nullptr;
  int wants_values = parsed ? PyObject_IsTrue(parsed) : 0;
  if (wants_values < 0) return nullptr;
  if (wants_values && !key) {
    PyErr_SetString(PyExc_TypeError, "_Checked(): parsed=True needs a key");
    return nullptr;
  }
  if (key && (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2)) {
    PyErr_SetString(PyExc_TypeError, "_Checked(): key must be (kind, name) or None");
    return nullptr;
  }
  auto* c = reinterpret_cast<Checked*>(type->tp_alloc(type, 0));
  if (!c) return nullptr;
  c->vectorcall = checked_call;
  Py_INCREF(fn);
  Py_INCREF(on_error);
  Py_INCREF(reduce);
  c->fn = fn;
  c->on_error = on_error;
  c->reduce = reduce;
  c->dict = nullptr;
  c->recorder = nullptr;
  c->cast_policy = 0;
  c->key = Py_XNewRef(key);
  c->parser_obj = nullptr;
  c->parser = nullptr;
  c->parser_state = 0;
  c->cached_nargs = -1;
  c->cached_kwnames = nullptr;
  c->parsed = wants_values != 0;
  c->method = key && PyUnicode_Check(PyTuple_GET_ITEM(key, 0)) &&
              PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(key, 0), "m") == 0;
  return reinterpret_cast<PyObject*>(c);
}

int checked_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* c = reinterpret_cast<Checked*>(self);
  Py_VISIT(c->fn);
  Py_VISIT(c->on_error);
  Py_VISIT(c->reduce);
  Py_VISIT(c->dict);
  Py_VISIT(c->recorder);
  Py_VISIT(c->key);
  Py_VISIT(c->parser_obj);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int checked_clear(PyObject* self) {
  auto* c = reinterpret_cast<Checked*>(self);
  Py_CLEAR(c->fn);
  Py_CLEAR(c->on_error);
  Py_CLEAR(c->reduce);
  Py_CLEAR(c->dict);
  Py_CLEAR(c->recorder);
  Py_CLEAR(c->key);
  c->parser = nullptr;
  c->parser_state = 2;
  Py_CLEAR(c->parser_obj);
  c->cached_nargs = -1;
  Py_CLEAR(c->cached_kwnames);
  return 0;
}

void checked_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  checked_clear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

// Bound to an instance as Python functions are: x.method -> a bound method.
PyObject* checked_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

// repr(wrapper) is the wrapped Python function's, or for a C++ method (pybind11's function,
// whose own repr names pybind11's internals) what Python prints for a C method of Tensor.
// Pickling finds the wrapper by name.
PyObject* checked_repr(PyObject* self) {
  PyObject* fn = reinterpret_cast<Checked*>(self)->fn;
  if (!PyCFunction_Check(fn)) return PyObject_Repr(fn);
  PyObject* name = PyObject_GetAttrString(fn, "__name__");
  if (!name) return nullptr;
  PyObject* r = PyUnicode_FromFormat("<method '%U' of 'Tensor' objects>", name);
  Py_DECREF(name);
  return r;
}

PyObject* checked_reduce(PyObject* self, PyObject*) {
  PyObject* r = reinterpret_cast<Checked*>(self)->reduce;
  Py_INCREF(r);
  return r;
}

// _set_recorder(fn): fills the recording slot (None empties it).
PyObject* checked_set_recorder(PyObject* self, PyObject* fn) {
  auto* c = reinterpret_cast<Checked*>(self);
  if (fn != Py_None && !PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "_set_recorder: expected a callable or None");
    return nullptr;
  }
  PyObject* old = c->recorder;
  c->recorder = fn == Py_None ? nullptr : Py_NewRef(fn);
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

// _set_cast_policy(n): the autocast list this op is in (0: none).
PyObject* checked_set_cast_policy(PyObject* self, PyObject* n) {
  long v = PyLong_AsLong(n);
  if (v == -1 && PyErr_Occurred()) return nullptr;
  reinterpret_cast<Checked*>(self)->cast_policy = int(v);
  Py_RETURN_NONE;
}

PyObject* get_recorder(PyObject* self, void*) {
  PyObject* r = reinterpret_cast<Checked*>(self)->recorder;
  return Py_NewRef(r ? r : Py_None);
}

PyMethodDef g_methods[] = {
    {"__reduce__", checked_reduce, METH_NOARGS, nullptr},
    {"_set_recorder", checked_set_recorder, METH_O, nullptr},
    {"_set_cast_policy", checked_set_cast_policy, METH_O, nullptr},
    {"_call_bypassing_autocast",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&checked_bypass)),
     METH_FASTCALL | METH_KEYWORDS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef g_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Checked, vectorcall), READONLY, nullptr},
    {"__dictoffset__", T_PYSSIZET, offsetof(Checked, dict), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

// __wrapped__ is fn; __name__, __qualname__, __doc__ and __module__ are fn's (read when asked,
// so that wrapping costs no attribute writes at import).
PyObject* get_wrapped(PyObject* self, void*) {
  PyObject* fn = reinterpret_cast<Checked*>(self)->fn;
  Py_INCREF(fn);
  return fn;
}

PyObject* get_fn_attr(PyObject* self, void* name) {
  return PyObject_GetAttrString(reinterpret_cast<Checked*>(self)->fn,
                                static_cast<const char*>(name));
}

// A C++ method's __qualname__ names pybind11's function record: "Tensor.<name>" instead.
PyObject* get_qualname(PyObject* self, void*) {
  PyObject* fn = reinterpret_cast<Checked*>(self)->fn;
  if (!PyCFunction_Check(fn)) return PyObject_GetAttrString(fn, "__qualname__");
  PyObject* name = PyObject_GetAttrString(fn, "__name__");
  if (!name) return nullptr;
  PyObject* r = PyUnicode_FromFormat("Tensor.%U", name);
  Py_DECREF(name);
  return r;
}

char k_name[] = "__name__", k_qualname[] = "__qualname__", k_doc[] = "__doc__",
     k_module[] = "__module__";

PyGetSetDef g_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {"__wrapped__", get_wrapped, nullptr, nullptr, nullptr},
    {"_recorder", get_recorder, nullptr, nullptr, nullptr},
    {k_name, get_fn_attr, nullptr, nullptr, k_name},
    {k_qualname, get_qualname, nullptr, nullptr, nullptr},
    {k_doc, get_fn_attr, nullptr, nullptr, k_doc},
    {k_module, get_fn_attr, nullptr, nullptr, k_module},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot g_slots[] = {{Py_tp_new, reinterpret_cast<void*>(checked_new)},
                         {Py_tp_dealloc, reinterpret_cast<void*>(checked_dealloc)},
                         {Py_tp_traverse, reinterpret_cast<void*>(checked_traverse)},
                         {Py_tp_clear, reinterpret_cast<void*>(checked_clear)},
                         {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
                         {Py_tp_descr_get, reinterpret_cast<void*>(checked_get)},
                         {Py_tp_repr, reinterpret_cast<void*>(checked_repr)},
                         {Py_tp_methods, g_methods},
                         {Py_tp_members, g_members},
                         {Py_tp_getset, g_getset},
                         {0, nullptr}};

PyType_Spec g_spec = {"cudalite._C._Checked", sizeof(Checked), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                          Py_TPFLAGS_METHOD_DESCRIPTOR,
                      g_slots};

}  // namespace

void bind_checked(py::module_& m) {
  PyObject* type = PyType_FromSpec(&g_spec);
  if (!type) throw py::error_already_set();
  m.add_object("_Checked", py::reinterpret_steal<py::object>(type));
  m.def(
      "_set_autocast_hook",
      [](py::object f) {
        Py_XDECREF(g_autocast_hook);
        g_autocast_hook = f.is_none() ? nullptr : f.release().ptr();
      },
      "The function autocast calls ops in its lists through (Note [Autocast at the entry]).");
  m.def(
      "_set_autocast_active", [](bool on) { t_autocast = on ? 1 : 0; },
      "Whether an autocast region is enabled in this thread (any device).");
  m.def("_is_autocast_active", [] { return t_autocast != 0; });
  m.def(
      "_set_parser_loader",
      [](py::object loader, py::object absent) {
        Py_XDECREF(g_parser_loader);
        Py_XDECREF(g_absent_type);
        g_parser_loader = loader.is_none() ? nullptr : loader.release().ptr();
        g_absent_type = absent.is_none() ? nullptr : absent.release().ptr();
      },
      "loader(kind, name) -> the _ArgParser of a function's torch signatures (Note [Parsing "
      "at the entry]), and the class of forwarded markers that defer to the check after a "
      "failure.");
}

}  // namespace cl::bind
