#!/usr/bin/env bash
# Copies the shared contract into the package (Sources/ShopAPI/Contract/reiterate-api.yaml), which
# SwiftPM embeds in the binary (`resources: [.embedInCode(...)]`: bytes in the code, no bundle folder
# beside the binary). `make contract` runs it; ContractDocumentTests fails while the copy differs.
set -euo pipefail
spec=${1:-../shared/api/reiterate-api.yaml}
cp "$spec" Sources/ShopAPI/Contract/reiterate-api.yaml
echo "copied $spec into Sources/ShopAPI/Contract/reiterate-api.yaml"
