"""ctest: the hand-written aws-savings-plans-rates samples are what
`aws savingsplans describe-savings-plans-offering-rates --output json` prints, per botocore's own
model of the response (DescribeSavingsPlansOfferingRatesResponse): every member name known and of
its type (botocore's validator), every enum value and pattern respected (a walk of the shape tree,
which the validator, written for requests, does not check). A sample with a misspelled member must
be refused, or the check proves nothing. Skipped (77) without botocore.

usage: check_savings_plans_sample.py SAMPLE.json..."""
import copy
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
import export_checks as checks  # noqa: E402  (skip and fail, shared with the export checks)


def response_shape():
    import botocore.session
    model = botocore.session.get_session().get_service_model("savingsplans")
    return model.operation_model("DescribeSavingsPlansOfferingRates").output_shape


def enum_and_pattern_errors(value, shape, where):
    """Values outside their string shape's enum or pattern, as 'where: message' lines."""
    if shape.type_name == "structure" and isinstance(value, dict):
        return [error for name, member in value.items() if name in shape.members
                for error in enum_and_pattern_errors(member, shape.members[name], f"{where}.{name}")]
    if shape.type_name == "list" and isinstance(value, list):
        return [error for i, item in enumerate(value)
                for error in enum_and_pattern_errors(item, shape.member, f"{where}[{i}]")]
    if shape.type_name != "string" or not isinstance(value, str):
        return []
    if shape.enum and value not in shape.enum:
        return [f"{where}: '{value}' is not one of {shape.enum}"]
    pattern = shape.metadata.get("pattern")
    if pattern and not re.search(pattern, value):
        return [f"{where}: '{value}' does not match {pattern}"]
    return []


def problems(document, shape):
    from botocore.validate import ParamValidator
    report = ParamValidator().validate(document, shape)
    errors = [report.generate_report()] if report.has_errors() else []
    return errors + enum_and_pattern_errors(document, shape, "response")


def main():
    checks.require_modules("botocore", install="pip install botocore")
    shape = response_shape()
    for sample in sys.argv[1:]:
        with open(sample, encoding="utf-8") as file:
            document = json.load(file)
        found = problems(document, shape)
        if found:
            checks.fail(f"{sample} is not a DescribeSavingsPlansOfferingRates response:\n" + "\n".join(found))
        misspelled = copy.deepcopy(document)
        misspelled["searchResults"][0]["rates"] = misspelled["searchResults"][0].pop("rate")
        if not problems(misspelled, shape):
            checks.fail(f"{sample} with 'rate' misspelled passes: the check has no teeth")
        print(f"{sample}: {len(document['searchResults'])} rates match botocore's model")


if __name__ == "__main__":
    main()
