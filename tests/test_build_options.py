"""BuildOptions: one checked record from the keyword arguments; dlasim.estimate is load -> build -> cost."""
import dataclasses
import inspect

import pytest

import dlasim
from dlasim import BuildOptions, DlasimError, ModelError, api


@pytest.mark.parametrize("kw, message", [
    (dict(device="cpu"), "device='cpu': expected one of dla, gpu"),
    (dict(precision="fp64"), "precision='fp64': expected one of fp32, fp16, int8, best"),
    (dict(sparsity="on"), "sparsity='on': expected one of disable, enable, force"),
    (dict(batch=0), "batch=0 (--batch): expected an integer from 1 to 2147483647"),
    (dict(batch="2"), "batch='2' (--batch): expected an integer from 1 to 2147483647"),
    (dict(batch=True), "batch=True (--batch): expected an integer from 1 to 2147483647"),
    (dict(batch=2 ** 31), "batch=2147483648 (--batch): expected an integer from 1 to 2147483647"),
    (dict(shapes={"x": (1, 3, 2 ** 40, 4)}),
     "shapes (--shapes): input 'x': a dimension past 2147483647 (TensorRT dimensions are 32-bit), got 1x3x1099511627776x4"),
    (dict(gpu_fallback="yes"), "gpu_fallback='yes' (--allowGPUFallback): expected True or False"),
    (dict(dla_core=-1), "dla_core=-1 (--dla-core, --useDLACore): expected an integer >= 0"),
    (dict(dla_core=1.0), "dla_core=1.0 (--dla-core, --useDLACore): expected an integer >= 0"),
    (dict(shapes="x:1x3"), "shapes='x:1x3' (--shapes): expected {input name: shape tuple}"),
    (dict(shapes={"x": ("a", 3)}), "shapes (--shapes): expected {input name: shape tuple}, got ('x', ('a', 3))"),
    (dict(input_formats="bogus"), "input_formats (--inputIOFormats): bad format 'bogus'"),
    (dict(output_formats="int8:hwc5"), "output_formats (--outputIOFormats): bad format 'int8:hwc5'"),
    (dict(input_formats=8), "input_formats=8 (--inputIOFormats): expected a string"),
])
def test_bad_values_are_one_line_errors_naming_the_option(kw, message):
    with pytest.raises(DlasimError) as err:
        BuildOptions(**kw)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_choice_values_take_any_case():
    o = BuildOptions(device="GPU", precision="INT8", sparsity="Force")
    assert (o.device, o.precision, o.sparsity) == ("gpu", "int8", "force") and o == BuildOptions(
        device="gpu", precision="int8", sparsity="force")
    e = dlasim.estimate("zoo:resnet18", "a100", device="GPU", precision="Int8")
    assert e.device == "gpu" and e.precision == "int8"


def test_batch_and_shapes_errors_are_model_errors():
    with pytest.raises(ModelError):
        BuildOptions(batch=-3)
    with pytest.raises(ModelError):
        BuildOptions(shapes=[("x", (1, 3))])


@pytest.mark.parametrize("call", [
    lambda: dlasim.estimate("zoo:resnet18", precison="int8"),
    lambda: dlasim.build("zoo:resnet18", precison="int8"),
    lambda: dlasim.explain("zoo:resnet18", precison="int8"),
    lambda: dlasim.compare("zoo:resnet18", vary={"batch": [1, 2]}, precison="int8"),
    lambda: BuildOptions.of(precison="int8"),
    lambda: dlasim.estimate_many(["zoo:resnet18"], precison="int8"),
])
def test_unknown_option_is_an_error_naming_it(call):
    with pytest.raises(DlasimError, match=r"^unknown option 'precison' \(known: device, precision, batch, "):
        call()


def test_a_positional_option_that_is_not_a_record_is_refused():
    # the third positional argument of estimate/build is the record (it was the device before BuildOptions)
    with pytest.raises(DlasimError, match=r"^options='gpu': expected a BuildOptions record; give the build "
                                          r"options as keywords"):
        dlasim.estimate("zoo:resnet18", "orin-agx", "gpu")


def test_explain_measured_refuses_an_unknown_option():
    from dlasim.explainer.measured import explain_measured
    with pytest.raises(DlasimError, match=r"^unknown option 'precison'"):
        explain_measured("zoo:resnet18", "xavier-agx", "profile.json", precison="int8")


def test_record_is_frozen_hashable_and_keeps_shapes_as_pairs():
    o = BuildOptions.of(device="gpu", shapes={"x": [1, 3, 8, 8]})
    assert o.shapes == (("x", (1, 3, 8, 8)),) and o.shape_map == {"x": (1, 3, 8, 8)}
    assert hash(o) == hash(BuildOptions(device="gpu", shapes={"x": (1, 3, 8, 8)}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.device = "dla"
    # None means "not given": the default, or the base record's value
    assert BuildOptions.of(device=None) == BuildOptions()
    assert BuildOptions.of(o, precision="int8", device=None) == BuildOptions(device="gpu", precision="int8",
                                                                           shapes={"x": (1, 3, 8, 8)})
    assert BuildOptions.of(**o.as_kwargs()) == o


def test_io_formats_parse_to_pairs():
    o = BuildOptions(input_formats="INT8:dla_hwc4, fp16", output_formats="int8:chw32")
    assert o.input_io == (("int8", "dla_hwc4"), ("fp16", "linear"))
    assert o.output_io == (("int8", "chw32"),) and BuildOptions().input_io == ()


def test_a_record_and_keywords_give_the_same_estimate():
    o = BuildOptions(device="gpu", precision="int8", batch=2)
    by_record = dlasim.estimate("zoo:resnet18", "orin-agx", o)
    by_keywords = dlasim.estimate("zoo:resnet18", "orin-agx", device="gpu", precision="int8", batch=2)
    assert by_record.to_dict(parts=True) == by_keywords.to_dict(parts=True)
    assert by_record.device == "gpu" and by_record.batch == 2
    # keywords change the record they are given with
    assert dlasim.estimate("zoo:resnet18", "orin-agx", o, batch=1).batch == 1


def test_the_plan_carries_the_record():
    plan = dlasim.build("zoo:resnet18", "orin-agx", precision="int8", sparsity="enable")
    assert isinstance(plan.options, BuildOptions)
    assert (plan.device, plan.precision, plan.sparsity) == ("dla", "int8", "enable")
    # a DLA-only platform: layers cannot fall back, whatever was asked
    b = dlasim.GraphBuilder("one")
    g = b.build([b.relu(b.conv(b.input("x", (1, 16, 8, 8)), 16, kernel=3))])
    assert dlasim.build(g, "nvdla-small").gpu_fallback is False


def _body(fn) -> list[str]:
    """The source lines of `fn` after its signature and docstring, blank lines and comments left out."""
    lines = inspect.getsource(fn).splitlines()
    doc_end = max(i for i, l in enumerate(lines) if l.strip().endswith('"""'))
    return [l for l in lines[doc_end + 1:] if l.strip() and not l.strip().startswith("#")]


def test_estimate_reads_as_load_build_cost():
    body = _body(api.estimate)
    assert len(body) <= 10, body
    text = "\n".join(body)
    order = [text.index(s) for s in ("BuildOptions.of(", "load(", "build_engine(", "engine.estimate")]
    assert order == sorted(order)
    # no build decision is made in the facade: the precision choice by timing lives in the builder
    assert "precision" not in text and "reformat" not in text


def test_explain_and_compare_take_a_record_like_estimate():
    import dlasim
    rec = dlasim.BuildOptions.of(device="gpu", precision="int8")
    a = dlasim.explain("zoo:resnet18", "orin-agx", options=rec)
    b = dlasim.explain("zoo:resnet18", "orin-agx", device="gpu", precision="int8")
    assert a.estimate.total_ms == b.estimate.total_ms and a.estimate.device == "gpu"
    # keywords change the record's fields
    c = dlasim.compare("zoo:resnet18", "orin-agx", {"precision": ["fp16", "int8"]}, options=rec)
    assert [e.precision for e in c.variants] == ["fp16", "int8"] and c.variants[0].device == "gpu"
    with pytest.raises(dlasim.DlasimError, match="options: expected a dlasim.BuildOptions"):
        dlasim.explain("zoo:resnet18", "orin-agx", options={"device": "gpu"})
