opreg_add_cpp_test(test_schema_parser LIBS opreg::registry)
opreg_add_cpp_test(test_schema_printer LIBS opreg::registry)
opreg_add_cpp_test(test_schema_errors LIBS opreg::registry)
opreg_add_cpp_test(test_cli_schema LIBS opreg_cli_commands)
