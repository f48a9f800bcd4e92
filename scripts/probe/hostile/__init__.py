"""The hostile-input probe run (scripts/probe/hostile_inputs.py is its command line).

  model         Probe, Result, Gen, unclear_reason, the run's constants
  frameworks    np, and opreg / o / torch / T once load_frameworks() ran
  inputs        rnd / trnd / otnd / ro / misaligned / nanify / zcplx (names repro lines use)
  values        Logical (what a tensor argument means), overlap, dtype rounding, strict scalars
  references    the built-in ops' signatures, bind(), NumPy references, compare()
  run_python    run_op_probe / run_api_probe (worker side)
  checkers      the chk_* functions API probes name in `expect`
  schemas       hostile schema texts (Python and CLI probes)
  gen_ops       probes of the built-in ops (NumPy, torch, opreg tensors, torch.ops)
  gen_api       probes of op lookup, constructors, tensor methods; python_probes()
  gen_lib       probes of schema text, Library, custom_op, load_library, symm_mem
  worker        the worker subprocess and its client
  cli_probes    find_cli, gen_cli_probes
  cli_judge     the trace format's rules, judge_cli
  cli_run       run_cli_probe, the schema reference table
  report        select_quick, print_report
  main          the command line
"""
