// Small statistics every estimator in pmlab shares.
#pragma once

#include <vector>

namespace pmlab {

// The middle value (the mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values);

}  // namespace pmlab
